// Package loadgen simulates annotators over closer's JSON API and checks
// afterwards, in the study's export, that every answer the server
// acknowledged was stored exactly once. It is the engine of `closer load`
// and of the fault harness (internal/faults).
//
// Each simulated annotator joins the study (POST participants), then asks
// for the next question and answers it until the server says done, then
// joins again as a new participant. It behaves as a well-behaved client
// does: a 503 or 429 is retried after its Retry-After, any other 5xx and a
// failed connection after a short growing pause, and the same answer is
// sent again until the server gives a definite reply (answers are
// idempotent: the same answer again is a 200 that stores nothing). It only
// ever talks to the base URL it is given.
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/closer-lab/closer/internal/triplet"
)

// Endpoint names one of the API calls an annotator makes.
type Endpoint string

// The endpoints, in the order an annotator uses them.
const (
	Participants Endpoint = "participants"
	Next         Endpoint = "next"
	Answer       Endpoint = "answer"
	Export       Endpoint = "export"
)

// Endpoints lists the annotators' endpoints in report order.
var Endpoints = []Endpoint{Participants, Next, Answer}

// Config is one load run.
type Config struct {
	BaseURL string // the server, e.g. http://localhost:8080 (http or https, no path)
	// Replicas are more URLs of the same server (replicas on one
	// database): every annotator sends its requests to BaseURL and these in
	// turn, request by request, as a load balancer without sticky sessions
	// would. The export is checked on BaseURL.
	Replicas []string
	// SeparateNext asks for each next question with its own request (GET
	// …/next after every answer), as clients did before the answer's reply
	// carried it; by default an answer asks for the next question in the
	// same request ("next": true).
	SeparateNext bool
	Study        string        // the study's slug
	Concurrency  int           // simulated annotators at once
	Duration     time.Duration // how long annotators keep asking; in-flight requests then finish
	MaxAnswers   int           // stop earlier, once this many answers were acknowledged (0: no limit)
	Think        Think         // pause between seeing a question and answering it
	// Ramp spreads the annotators' arrivals: annotator i of N joins at
	// i·Ramp/N after the start instead of all at once, as a crowd that
	// trickles in rather than one that clicks "start" in the same second
	// (0: all at once). The run's Duration counts from the start.
	Ramp       time.Duration
	Oracle     *Oracle // answers from coordinates; nil answers at random
	AdminToken string  // an admin API token: download the export and check it; "" skips the check
	Seed       uint64  // random answers and think times
	// Stop, if set, ends the run early when it is closed, as the end of
	// Duration does (requests in flight finish, the check runs).
	Stop <-chan struct{}
	// Timeout bounds one request (default 30 s); a timed-out request is a
	// transport error and is retried like one.
	Timeout time.Duration
	// Client sends the requests (default: NewClient(Concurrency)).
	Client *http.Client
	// OnEvent, if set, is called after every request (from the annotators'
	// goroutines at once, so it must be safe for concurrent use).
	OnEvent func(Event)
}

// Event is the outcome of one request.
type Event struct {
	At       time.Time // when the response (or the transport error) came
	Endpoint Endpoint
	Status   int // HTTP status; 0 for a transport error
	Latency  time.Duration
}

// Think is the think time: a fixed pause, or exponentially distributed
// pauses with mean Mean.
type Think struct {
	Mean        time.Duration
	Exponential bool
}

// ParseThink reads "0", "250ms" (fixed) or "exp:250ms" (exponential with
// that mean).
func ParseThink(s string) (Think, error) {
	s = strings.TrimSpace(s)
	var t Think
	if rest, ok := strings.CutPrefix(s, "exp:"); ok {
		t.Exponential = true
		s = rest
	}
	if s == "0" {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return Think{}, fmt.Errorf("think time %q: want a duration such as 200ms, or exp:200ms for exponential pauses with that mean", s)
	}
	t.Mean = d
	return t, nil
}

func (t Think) String() string {
	if t.Exponential {
		return "exp:" + t.Mean.String()
	}
	return t.Mean.String()
}

func (t Think) draw(rng *rand.Rand) time.Duration {
	if !t.Exponential || t.Mean == 0 {
		return t.Mean
	}
	return time.Duration(rng.ExpFloat64() * float64(t.Mean))
}

// NewClient returns an HTTP client for concurrency annotators: one idle
// connection per annotator is kept open, and no proxy from the environment
// is used, so traffic goes only to the URL given. Redirects are not
// followed (the API never redirects).
func NewClient(concurrency int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.MaxIdleConns = concurrency + 8
	tr.MaxIdleConnsPerHost = concurrency + 8
	tr.IdleConnTimeout = 90 * time.Second
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Result is what a run measured.
type Result struct {
	Elapsed      time.Duration // from the start until the last annotator stopped
	Participants int           // participants created
	Completed    int           // participants who were told they are done
	Answers      int           // answers acknowledged (201, or 200 for a repeat)
	Endpoints    map[Endpoint]*EndpointStats
	// Check is the exactly-once check of the export (nil without an admin token).
	Check *Check
	// Stopped says why the run ended before its duration ("" if it did not).
	Stopped string
}

// AnswersPerSecond is the acknowledged answers over the elapsed time.
func (r *Result) AnswersPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Answers) / r.Elapsed.Seconds()
}

// ServerErrors counts, over all endpoints, responses with a 5xx status
// other than 503 (which a server that sheds load or waits for its database
// is allowed to give).
func (r *Result) ServerErrors() int {
	n := 0
	for _, st := range r.Endpoints {
		for status, c := range st.Status {
			if status >= 500 && status != http.StatusServiceUnavailable {
				n += c
			}
		}
	}
	return n
}

// EndpointStats are one endpoint's requests: every attempt, retries
// included, by status (0 is a transport error), and the latency of the
// successful (2xx) ones, over the whole run and over its steady state
// (the requests sent after the ramp, when every annotator has arrived).
type EndpointStats struct {
	Status    map[int]int
	latencies []time.Duration // 2xx only
	steady    []time.Duration // 2xx sent after Config.Ramp
}

func newEndpointStats() *EndpointStats { return &EndpointStats{Status: map[int]int{}} }

// Requests is the number of attempts.
func (s *EndpointStats) Requests() int {
	n := 0
	for _, c := range s.Status {
		n += c
	}
	return n
}

// OK is the number of 2xx responses.
func (s *EndpointStats) OK() int { return len(s.latencies) }

// Errors returns the non-2xx outcomes by status (0: transport error).
func (s *EndpointStats) Errors() map[int]int {
	e := map[int]int{}
	for status, c := range s.Status {
		if status < 200 || status > 299 {
			e[status] = c
		}
	}
	return e
}

// Percentile returns the p-th percentile (0 < p ≤ 100, nearest rank) of
// the successful requests' latency, or 0 without any.
func (s *EndpointStats) Percentile(p float64) time.Duration {
	return percentile(s.latencies, p)
}

// percentile is the p-th percentile (nearest rank) of sorted, 0 if empty.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(n))) - 1
	return sorted[max(0, min(i, n-1))]
}

// SteadyOK is the number of 2xx responses to requests sent after the ramp.
func (s *EndpointStats) SteadyOK() int { return len(s.steady) }

// SteadyPercentile is Percentile over the requests sent after the ramp
// (all of them without a ramp): a crowd's arrival, when annotators join
// and ask for their first question on top of the others' answers, is
// apart from the load it then keeps up.
func (s *EndpointStats) SteadyPercentile(p float64) time.Duration {
	return percentile(s.steady, p)
}

func (s *EndpointStats) merge(o *EndpointStats) {
	for status, c := range o.Status {
		s.Status[status] += c
	}
	s.latencies = append(s.latencies, o.latencies...)
	s.steady = append(s.steady, o.steady...)
}

// answerState is what became of one answer the annotators sent.
type answerState int

const (
	acknowledged   answerState = iota // 201 or 200
	rejected                          // a 4xx: the server refused it and stored nothing
	unacknowledged                    // the last attempt failed without a reply (connection, 5xx) when the run ended
)

// sentAnswer is one answer and its fate.
type sentAnswer struct {
	questionID string
	closer     int
	// choices are an odd-one-out or rank answer's items in order,
	// separated by spaces as the all-answers export writes them ("": a
	// triplet's answer, closer).
	choices string
	state   answerState
}

// Run drives the load for cfg.Duration, then (with an admin token)
// downloads the export and checks it. Cancelling ctx aborts at once, with
// no check. When the server answers in a way that makes going on pointless
// (the study is unknown or not open), the annotators stop early, the check
// still runs, and Run returns the result with that reason as its error.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	base, err := checkBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	cfg.BaseURL = base
	for i, r := range cfg.Replicas {
		if cfg.Replicas[i], err = checkBaseURL(r); err != nil {
			return nil, err
		}
	}
	if cfg.Study == "" {
		return nil, errors.New("the study's slug is missing")
	}
	if cfg.Concurrency < 1 {
		return nil, errors.New("concurrency must be at least 1")
	}
	if cfg.Duration <= 0 {
		return nil, errors.New("duration must be positive")
	}
	if cfg.Ramp < 0 || cfg.Ramp >= cfg.Duration {
		return nil, errors.New("ramp must be at least 0 and shorter than the duration")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Client == nil {
		cfg.Client = NewClient(cfg.Concurrency)
	}

	stop := make(chan struct{})
	var stopOnce sync.Once
	var stopReason string
	halt := func(reason string) {
		stopOnce.Do(func() {
			stopReason = reason
			close(stop)
		})
	}
	defer halt("") // releases the watcher of cfg.Stop when ctx ends the run
	timer := time.AfterFunc(cfg.Duration, func() { halt("") })
	defer timer.Stop()
	if cfg.Stop != nil {
		go func() {
			select {
			case <-cfg.Stop:
				halt("")
			case <-stop:
			}
		}()
	}

	start := time.Now()
	var acked atomic.Int64
	annotators := make([]*annotator, cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range annotators {
		a := &annotator{
			cfg: &cfg, ctx: ctx, stop: stop, halt: halt, acked: &acked,
			rng:        triplet.NewRand(cfg.Seed + uint64(i)),
			stats:      map[Endpoint]*EndpointStats{},
			steadyFrom: start.Add(cfg.Ramp),
		}
		for _, ep := range Endpoints {
			a.stats[ep] = newEndpointStats()
		}
		annotators[i] = a
		arrive := cfg.Ramp * time.Duration(i) / time.Duration(cfg.Concurrency)
		wg.Go(func() {
			if a.sleep(arrive) {
				a.run()
			}
		})
	}
	wg.Wait()
	res := &Result{Elapsed: time.Since(start), Endpoints: map[Endpoint]*EndpointStats{}}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, ep := range Endpoints {
		res.Endpoints[ep] = newEndpointStats()
	}
	var sent []sentAnswer
	for _, a := range annotators {
		res.Participants += a.participants
		res.Completed += a.completed
		for ep, st := range a.stats {
			res.Endpoints[ep].merge(st)
		}
		sent = append(sent, a.sent...)
	}
	for _, st := range res.Endpoints {
		slices.Sort(st.latencies)
		slices.Sort(st.steady)
	}
	for _, s := range sent {
		if s.state == acknowledged {
			res.Answers++
		}
	}
	res.Stopped = stopReason
	if cfg.AdminToken != "" {
		c, err := checkExport(ctx, &cfg, sent)
		if err != nil {
			return res, fmt.Errorf("export check: %w", err)
		}
		res.Check = c
	}
	if stopReason != "" {
		return res, errors.New(stopReason)
	}
	return res, nil
}

// checkBaseURL accepts an http(s) URL with a host and nothing after it.
func checkBaseURL(s string) (string, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "/")
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("base URL %q: want the server's http(s) URL without a path, e.g. http://localhost:8080", s)
	}
	return s, nil
}

// retryAfter reads a Retry-After header (seconds or an HTTP date); ok is
// false when there is none usable.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, t.Sub(now)), true
	}
	return 0, false
}
