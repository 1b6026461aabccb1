package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/closer-lab/closer/internal/loadgen"
)

func init() {
	register("load", "simulated annotators on a running server's JSON API, with an exactly-once check", runLoad)
}

const loadUsage = `usage: closer load --base URL --study SLUG [flags]

Simulated annotators on the JSON API of a running closer server: each joins
the study (POST participants), then asks for its first question and answers
until the server says done, each answer's reply carrying the next question
(one request per answer; --separate-next asks for it with a request of its
own), then joins again. --base may list several replicas of one server,
separated by commas: every annotator sends its requests to them in turn. Answers come from an oracle
on --coords (the option nearer to the anchor), or at random. The run stops
by itself after --duration (or --answers acknowledged answers), lets the
requests in flight finish, and sends traffic only to --base.

The annotators behave as a well-behaved client: a 503 or 429 is retried
after its Retry-After, another 5xx or a failed connection after a short
growing pause; every attempt is counted.

It prints the acknowledged answers per second, the p50/p95/p99 latency of
the successful requests per endpoint (participants, next, answer) and the
errors by status ("transport" for a connection failure or timeout); with
--ramp, also the same percentiles over the requests sent after the ramp,
once every annotator has arrived. With an
admin API token (--admin-token, or $CLOSER_ADMIN_TOKEN) it then downloads
the study's triplets.csv and checks that every acknowledged answer (201, or
200 for a repeat) is there exactly once with the closer sent; answers whose
last attempt got no definite reply (a connection failure, a 5xx) are
reported apart, as they may or may not have been stored. It exits with
status 1 when the check fails.

flags:
`

func runLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, loadUsage)
		fs.PrintDefaults()
	}
	base := fs.String("base", "", "the server's URL, e.g. http://localhost:8080, or several replicas' URLs separated by commas (required)")
	study := fs.String("study", "", "the study's slug, e.g. demo (required)")
	concurrency := fs.Int("concurrency", 10, "simulated annotators at once")
	duration := fs.Duration("duration", 30*time.Second, "how long to run")
	maxAnswers := fs.Int("answers", 0, "stop earlier, once this many answers were acknowledged (0: run for --duration)")
	ramp := fs.Duration("ramp", 0, "spread the annotators' arrivals evenly over this time from the start (0: all at once)")
	thinkF := fs.String("think", "0", "think time before each answer: a duration (200ms) or exp:MEAN for exponential pauses")
	coords := fs.String("coords", "", "CSV item,x1,...,xD: answer as an oracle on these coordinates (items by label or index); random answers without")
	adminToken := fs.String("admin-token", "", "admin API token for the exactly-once check of the export (default $CLOSER_ADMIN_TOKEN; none: no check)")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	seed := fs.Uint64("seed", 1, "seed of the random answers and think times")
	timeout := fs.Duration("timeout", 30*time.Second, "bound on one request")
	eventsPath := fs.String("events", "", "write every request to this CSV file (at_ms since the start, endpoint, status, latency_ms), to line the slow ones up with the server's own events")
	separate := fs.Bool("separate-next", false, "ask for each next question with a request of its own (GET …/next), not in the answer's reply")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *base == "" || *study == "" {
		fmt.Fprintln(stderr, "closer load: --base and --study are required")
		fs.Usage()
		return errUsage
	}
	think, err := loadgen.ParseThink(*thinkF)
	if err != nil {
		return err
	}
	if *adminToken == "" {
		*adminToken = os.Getenv("CLOSER_ADMIN_TOKEN")
	}
	bases := strings.Split(*base, ",")
	cfg := loadgen.Config{
		BaseURL: bases[0], Replicas: bases[1:], Study: *study, Concurrency: *concurrency, Duration: *duration, MaxAnswers: *maxAnswers,
		Think: think, Ramp: *ramp, AdminToken: *adminToken, Seed: *seed, Timeout: *timeout, SeparateNext: *separate,
	}
	if *coords != "" {
		f, err := os.Open(*coords)
		if err != nil {
			return err
		}
		cfg.Oracle, err = loadgen.ReadOracle(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", *coords, err)
		}
	}
	if !*asJSON {
		answers := "random answers"
		if cfg.Oracle != nil {
			answers = "answers from " + *coords
		}
		fmt.Fprintf(stdout, "closer load: %d annotators on %s, study %s, for %s, think %s, %s\n",
			cfg.Concurrency, *base, cfg.Study, cfg.Duration, think, answers)
	}
	var events *eventLog
	if *eventsPath != "" {
		f, err := os.Create(*eventsPath)
		if err != nil {
			return err
		}
		events = newEventLog(f, time.Now())
		cfg.OnEvent = events.add
	}
	res, runErr := loadgen.Run(ctx, cfg)
	if events != nil {
		if err := events.close(); err != nil && runErr == nil {
			runErr = fmt.Errorf("%s: %w", *eventsPath, err)
		}
	}
	if res == nil {
		return runErr
	}
	if *asJSON {
		if err := writeLoadJSON(stdout, cfg, res, runErr); err != nil {
			return err
		}
	} else {
		writeLoadText(stdout, res, cfg.Ramp)
	}
	if runErr != nil {
		return runErr
	}
	if res.Check != nil && !res.Check.OK() {
		return fmt.Errorf("exactly-once check failed: %s", res.Check.Problems())
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// statusKey names a status in the error counts ("transport" for none).
func statusKey(status int) string {
	if status == 0 {
		return "transport"
	}
	return strconv.Itoa(status)
}

func writeLoadText(w io.Writer, res *loadgen.Result, ramp time.Duration) {
	fmt.Fprintf(w, "%.2f s: %d answers acknowledged, %.1f answers/s; %d participants (%d completed)\n\n",
		res.Elapsed.Seconds(), res.Answers, res.AnswersPerSecond(), res.Participants, res.Completed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "endpoint    \trequests\tok\tp50 ms\tp95 ms\tp99 ms\tmax ms\t")
	var errs []string
	for _, ep := range loadgen.Endpoints {
		st := res.Endpoints[ep]
		fmt.Fprintf(tw, "%-12s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t\n", ep, st.Requests(), st.OK(),
			ms(st.Percentile(50)), ms(st.Percentile(95)), ms(st.Percentile(99)), ms(st.Percentile(100)))
		e := st.Errors()
		statuses := slices.Sorted(maps.Keys(e))
		for _, s := range statuses {
			errs = append(errs, fmt.Sprintf("%s %s ×%d", ep, statusKey(s), e[s]))
		}
	}
	tw.Flush()
	if ramp > 0 {
		fmt.Fprintf(w, "\nafter the ramp (requests sent from %s on):\n", ramp)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "endpoint    \tok\tp50 ms\tp95 ms\tp99 ms\tmax ms\t")
		for _, ep := range loadgen.Endpoints {
			st := res.Endpoints[ep]
			fmt.Fprintf(tw, "%-12s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t\n", ep, st.SteadyOK(),
				ms(st.SteadyPercentile(50)), ms(st.SteadyPercentile(95)), ms(st.SteadyPercentile(99)), ms(st.SteadyPercentile(100)))
		}
		tw.Flush()
	}
	if len(errs) == 0 {
		fmt.Fprintln(w, "\nerrors: none")
	} else {
		fmt.Fprintf(w, "\nerrors by status (each retried unless a 4xx): %s\n", strings.Join(errs, ", "))
	}
	if n := res.ServerErrors(); n > 0 {
		fmt.Fprintf(w, "5xx other than 503: %d\n", n)
	}
	if res.Stopped != "" {
		fmt.Fprintf(w, "stopped early: %s\n", res.Stopped)
	}
	c := res.Check
	if c == nil {
		fmt.Fprintln(w, "export check: skipped (no --admin-token)")
		return
	}
	verdict := "OK"
	if !c.OK() {
		verdict = "FAILED"
	}
	fmt.Fprintf(w, "export check %s: %d acknowledged answers: %d lost, %d duplicated, %d with another closer (export: %d rows)\n",
		verdict, c.Acknowledged, c.Lost, c.Duplicated, c.WrongCloser, c.ExportRows)
	fmt.Fprintf(w, "  unacknowledged (no definite reply): %d, of which stored: %d\n", c.Unacknowledged, c.UnacknowledgedStored)
	fmt.Fprintf(w, "  rejected (4xx): %d, of which stored: %d\n", c.Rejected, c.RejectedStored)
}

// loadJSON is the --json output.
type loadJSON struct {
	BaseURL      string                  `json:"base_url"`
	Study        string                  `json:"study"`
	Concurrency  int                     `json:"concurrency"`
	DurationS    float64                 `json:"duration_s"`
	Think        string                  `json:"think"`
	RampS        float64                 `json:"ramp_s"`
	Oracle       bool                    `json:"oracle"`
	ElapsedS     float64                 `json:"elapsed_s"`
	Answers      int                     `json:"answers"`
	AnswersPerS  float64                 `json:"answers_per_s"`
	Participants int                     `json:"participants"`
	Completed    int                     `json:"participants_completed"`
	Endpoints    map[string]endpointJSON `json:"endpoints"`
	ServerErrors int                     `json:"server_errors_not_503"`
	Check        *checkJSON              `json:"check"`
	Stopped      string                  `json:"stopped,omitempty"`
	Error        string                  `json:"error,omitempty"`
	OK           bool                    `json:"ok"`
}

type endpointJSON struct {
	Requests int            `json:"requests"`
	OK       int            `json:"ok"`
	P50MS    float64        `json:"p50_ms"`
	P95MS    float64        `json:"p95_ms"`
	P99MS    float64        `json:"p99_ms"`
	MaxMS    float64        `json:"max_ms"`
	Errors   map[string]int `json:"errors"`
	// The same over the requests sent after the ramp (with --ramp only).
	SteadyOK    int     `json:"steady_ok,omitempty"`
	SteadyP50MS float64 `json:"steady_p50_ms,omitempty"`
	SteadyP99MS float64 `json:"steady_p99_ms,omitempty"`
}

type checkJSON struct {
	OK                   bool `json:"ok"`
	ExportRows           int  `json:"export_rows"`
	Acknowledged         int  `json:"acknowledged"`
	Lost                 int  `json:"lost"`
	Duplicated           int  `json:"duplicated"`
	WrongCloser          int  `json:"wrong_closer"`
	Unacknowledged       int  `json:"unacknowledged"`
	UnacknowledgedStored int  `json:"unacknowledged_stored"`
	Rejected             int  `json:"rejected"`
	RejectedStored       int  `json:"rejected_stored"`
}

func writeLoadJSON(w io.Writer, cfg loadgen.Config, res *loadgen.Result, runErr error) error {
	out := loadJSON{
		BaseURL: cfg.BaseURL, Study: cfg.Study, Concurrency: cfg.Concurrency, DurationS: cfg.Duration.Seconds(),
		Think: cfg.Think.String(), RampS: cfg.Ramp.Seconds(), Oracle: cfg.Oracle != nil,
		ElapsedS: res.Elapsed.Seconds(), Answers: res.Answers, AnswersPerS: res.AnswersPerSecond(),
		Participants: res.Participants, Completed: res.Completed,
		Endpoints: map[string]endpointJSON{}, ServerErrors: res.ServerErrors(), Stopped: res.Stopped,
		OK: runErr == nil && (res.Check == nil || res.Check.OK()),
	}
	if runErr != nil {
		out.Error = runErr.Error()
	}
	for _, ep := range loadgen.Endpoints {
		st := res.Endpoints[ep]
		e := map[string]int{}
		for s, n := range st.Errors() {
			e[statusKey(s)] = n
		}
		out.Endpoints[string(ep)] = endpointJSON{
			Requests: st.Requests(), OK: st.OK(),
			P50MS: ms(st.Percentile(50)), P95MS: ms(st.Percentile(95)), P99MS: ms(st.Percentile(99)), MaxMS: ms(st.Percentile(100)),
			Errors: e,
		}
		if cfg.Ramp > 0 {
			j := out.Endpoints[string(ep)]
			j.SteadyOK, j.SteadyP50MS, j.SteadyP99MS = st.SteadyOK(), ms(st.SteadyPercentile(50)), ms(st.SteadyPercentile(99))
			out.Endpoints[string(ep)] = j
		}
	}
	if c := res.Check; c != nil {
		out.Check = &checkJSON{
			OK: c.OK(), ExportRows: c.ExportRows, Acknowledged: c.Acknowledged, Lost: c.Lost, Duplicated: c.Duplicated,
			WrongCloser: c.WrongCloser, Unacknowledged: c.Unacknowledged, UnacknowledgedStored: c.UnacknowledgedStored,
			Rejected: c.Rejected, RejectedStored: c.RejectedStored,
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return errors.Join(errors.New("writing JSON"), err)
	}
	return nil
}
