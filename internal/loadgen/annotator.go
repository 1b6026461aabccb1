package loadgen

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/closer-lab/closer/internal/study"
)

// Retry pauses: after a connection failure, a 5xx or a 429 the pause
// starts at minPause and doubles up to maxPause (each drawn between half and
// all of it, so annotators do not come back in step); a longer Retry-After
// is obeyed, up to maxRetryAfter.
const (
	minPause      = 100 * time.Millisecond
	maxPause      = 2 * time.Second
	maxRetryAfter = time.Minute
)

// maxReplyBytes bounds what is read of one API reply.
const maxReplyBytes = 1 << 20

// externalIDPrefix marks the participants a load run creates. Each join
// adds a random part: a study gives one participant per external id, so a
// repeated id would resume an earlier (perhaps finished) participant.
const externalIDPrefix = "closer-load-"

// annotator is one simulated person; its fields are its own (no locks):
// the run merges them after every annotator stopped.
type annotator struct {
	cfg   *Config
	ctx   context.Context
	stop  <-chan struct{}
	halt  func(reason string)
	acked *atomic.Int64 // answers acknowledged by all annotators
	rng   *rand.Rand

	stats        map[Endpoint]*EndpointStats
	participants int
	completed    int
	sent         []sentAnswer
	calls        int // requests sent, for the turn of the replicas
	// steadyFrom is the end of the run's ramp: requests sent from then on
	// also count in the stats' steady-state latencies.
	steadyFrom time.Time
}

// base returns the server URL of the annotator's next request.
func (a *annotator) base() string {
	a.calls++
	if n := len(a.cfg.Replicas); n > 0 {
		if i := a.calls % (n + 1); i > 0 {
			return a.cfg.Replicas[i-1]
		}
	}
	return a.cfg.BaseURL
}

type nextReply struct {
	QuestionID string       `json:"question_id"`
	Format     study.Format `json:"format"`
	Anchor     Item         `json:"anchor"`
	Options    []Item       `json:"options"` // in display order
	Choose     int          `json:"choose"`  // how many options a rank answer chooses
	// Left and Right are a triplet's options as servers before the
	// format vocabulary sent them (no format, no options), so that a
	// before/after benchmark can drive an older build.
	Left  *Item `json:"left"`
	Right *Item `json:"right"`
	Done  bool  `json:"done"`
}

// options returns q's options, from left and right for an older server.
func (q *nextReply) options() (study.Format, []Item) {
	if len(q.Options) == 0 && q.Format == "" && q.Left != nil && q.Right != nil {
		return study.FormatTriplet, []Item{*q.Left, *q.Right}
	}
	return q.Format, q.Options
}

func (a *annotator) stopped() bool {
	select {
	case <-a.stop:
		return true
	default:
		return a.ctx.Err() != nil
	}
}

// sleep waits d; false if the run stopped first.
func (a *annotator) sleep(d time.Duration) bool {
	if d <= 0 {
		return !a.stopped()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-a.stop:
		return false
	case <-a.ctx.Done():
		return false
	}
}

// run joins the study again and again, answering as each participant
// until done, until the run stops.
func (a *annotator) run() {
	for !a.stopped() {
		token, ok := a.join()
		if !ok {
			return
		}
		a.answerUntilDone(token)
	}
}

func (a *annotator) join() (token string, ok bool) {
	r, ok := a.call(Participants, http.MethodPost, "/api/v1/studies/"+url.PathEscape(a.cfg.Study)+"/participants", "",
		[]byte(`{"external_id":"`+externalIDPrefix+crand.Text()+`"}`))
	if !ok {
		return "", false
	}
	if r.status != http.StatusCreated {
		a.halt(fmt.Sprintf("creating a participant in study %q: %s", a.cfg.Study, r))
		return "", false
	}
	var body struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil || body.Token == "" {
		a.halt(fmt.Sprintf("creating a participant: no token in the reply %q", r.body))
		return "", false
	}
	a.participants++
	return body.Token, true
}

// answerUntilDone asks and answers as one participant until the server says
// done, the token stops working or the run stops. Each answer asks for the
// next question in its own reply (unless SeparateNext); the question is
// asked for on its own at the start, after a refused answer, and when the
// reply carries none.
func (a *annotator) answerUntilDone(token string) {
	var q *nextReply
	for !a.stopped() {
		if q == nil {
			var ok bool
			if q, ok = a.next(token); !ok {
				return
			}
		}
		if q.Done {
			a.completed++
			return
		}
		think := a.cfg.Think.draw(a.rng)
		if !a.sleep(think) {
			return
		}
		closer, choices, err := a.choose(*q)
		if err != nil {
			a.halt(err.Error())
			return
		}
		answer := map[string]any{"question_id": q.QuestionID, "closer": closer, "response_ms": think.Milliseconds()}
		sent := sentAnswer{questionID: q.QuestionID, closer: closer, state: unacknowledged}
		if choices != nil {
			delete(answer, "closer")
			answer["choices"] = choices
			sent.choices = joinInts(choices)
		}
		if !a.cfg.SeparateNext {
			answer["next"] = true
		}
		body, _ := json.Marshal(answer)
		a.sent = append(a.sent, sent)
		s := &a.sent[len(a.sent)-1]
		r, ok := a.call(Answer, http.MethodPost, "/api/v1/answers", token, body)
		if !ok {
			return // stopped while retrying: it stays unacknowledged
		}
		q = nil
		if r.status/100 != 2 {
			s.state = rejected
			continue
		}
		s.state = acknowledged
		if n := a.acked.Add(1); a.cfg.MaxAnswers > 0 && n >= int64(a.cfg.MaxAnswers) {
			a.halt("")
		}
		if !a.cfg.SeparateNext {
			var reply struct {
				Next *nextReply `json:"next"`
			}
			if err := json.Unmarshal(r.body, &reply); err != nil {
				a.halt(fmt.Sprintf("answer: unreadable reply %q", r.body))
				return
			}
			if reply.Next != nil && !reply.Next.Done && reply.Next.QuestionID == "" {
				a.halt(fmt.Sprintf("answer: a next question without an id in %q", r.body))
				return
			}
			q = reply.Next // nil: none in the reply (the study is paused): ask
		}
	}
}

// next asks for the participant's next question; ok is false when the
// annotator should stop being this participant.
func (a *annotator) next(token string) (*nextReply, bool) {
	r, ok := a.call(Next, http.MethodGet, "/api/v1/studies/"+url.PathEscape(a.cfg.Study)+"/next", token, nil)
	if !ok {
		return nil, false
	}
	switch r.status {
	case http.StatusOK:
	case http.StatusUnauthorized, http.StatusForbidden:
		return nil, false // this participant is gone; join again
	default:
		a.halt(fmt.Sprintf("next question in study %q: %s", a.cfg.Study, r))
		return nil, false
	}
	var q nextReply
	if err := json.Unmarshal(r.body, &q); err != nil || (!q.Done && q.QuestionID == "") {
		a.halt(fmt.Sprintf("next question: unreadable reply %q", r.body))
		return nil, false
	}
	return &q, true
}

// choose picks the answer: a triplet's closer option, the oracle's
// choice or one drawn uniformly; an odd-one-out trial's odd one or a rank
// trial's q.Choose references in order (choices, drawn uniformly: the
// oracle answers triplets only).
func (a *annotator) choose(q nextReply) (closer int, choices []int, err error) {
	format, options := q.options()
	if len(options) == 0 {
		return 0, nil, fmt.Errorf("question %s offers no option", q.QuestionID)
	}
	switch format {
	case study.FormatOddOneOut, study.FormatRank:
		if a.cfg.Oracle != nil {
			return 0, nil, fmt.Errorf("question %s: the oracle answers triplets, not %q", q.QuestionID, format)
		}
		k := max(q.Choose, 1)
		if k > len(options) {
			return 0, nil, fmt.Errorf("question %s: choose %d of %d options", q.QuestionID, k, len(options))
		}
		for _, i := range a.rng.Perm(len(options))[:k] {
			choices = append(choices, options[i].Index)
		}
		return 0, choices, nil
	}
	if a.cfg.Oracle != nil {
		if format != study.FormatTriplet || len(options) != 2 {
			return 0, nil, fmt.Errorf("question %s: the oracle answers triplets, not %q with %d options", q.QuestionID, format, len(options))
		}
		closer, err = a.cfg.Oracle.Closer(q.Anchor, options[0], options[1])
		return closer, nil, err
	}
	return options[a.rng.IntN(len(options))].Index, nil, nil
}

// joinInts is item indices separated by spaces.
func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}

// reply is the outcome of the last attempt of a call: status 0 is a
// transport error (err says which).
type reply struct {
	status int
	hdr    http.Header
	body   []byte
	err    error
}

func (r reply) String() string {
	if r.status == 0 {
		return "no response: " + r.err.Error()
	}
	var e struct {
		Error string `json:"error"`
	}
	msg := strings.TrimSpace(string(r.body))
	if json.Unmarshal(r.body, &e) == nil && e.Error != "" {
		msg = e.Error
	}
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	return fmt.Sprintf("%d %s: %s", r.status, http.StatusText(r.status), msg)
}

// retryable says whether a well-behaved client tries again.
func (r reply) retryable() bool {
	return r.status == 0 || r.status >= 500 || r.status == http.StatusTooManyRequests
}

// call sends one request until it gets a definite reply (anything but a
// connection failure, a 5xx or a 429), pausing between attempts. ok is
// false when the run stopped while it was retrying; the reply is then the
// last attempt's.
func (a *annotator) call(ep Endpoint, method, path, token string, body []byte) (r reply, ok bool) {
	pause := minPause
	for {
		r = a.attempt(ep, method, path, token, body)
		if !r.retryable() {
			return r, true
		}
		if a.ctx.Err() != nil {
			return r, false
		}
		// The growing pause applies even after a Retry-After (which may
		// be 0), so that repeated refusals slow the annotator down.
		wait := pause/2 + time.Duration(a.rng.Int64N(int64(pause/2)+1))
		pause = min(2*pause, maxPause)
		if after, given := retryAfter(r.hdr, time.Now()); given {
			wait = max(wait, min(after, maxRetryAfter))
		}
		if !a.sleep(wait) {
			return r, false
		}
	}
}

// attempt sends the request once and records its outcome.
func (a *annotator) attempt(ep Endpoint, method, path, token string, body []byte) reply {
	ctx, cancel := context.WithTimeout(a.ctx, a.cfg.Timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base()+path, rd)
	if err != nil {
		panic(err) // cannot happen: Run checked the base URL and the slug is escaped
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	start := time.Now()
	res, err := a.cfg.Client.Do(req)
	var r reply
	if err == nil {
		r.body, err = io.ReadAll(io.LimitReader(res.Body, maxReplyBytes))
		_, _ = io.Copy(io.Discard, res.Body) // so the connection is reused
		res.Body.Close()
		if err == nil {
			r.status = res.StatusCode
			r.hdr = res.Header
		}
	}
	r.err = err
	now := time.Now()
	lat := now.Sub(start)
	st := a.stats[ep]
	st.Status[r.status]++
	if r.status/100 == 2 {
		st.latencies = append(st.latencies, lat)
		if !start.Before(a.steadyFrom) {
			st.steady = append(st.steady, lat)
		}
	}
	if a.cfg.OnEvent != nil {
		a.cfg.OnEvent(Event{At: now, Endpoint: ep, Status: r.status, Latency: lat})
	}
	return r
}
