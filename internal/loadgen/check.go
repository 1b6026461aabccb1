package loadgen

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	neturl "net/url"
	"strconv"
	"time"
)

// Check is the verdict of the exactly-once check: every answer the server
// acknowledged must be in the export exactly once, with the closer that was
// sent.
type Check struct {
	ExportRows int // rows in the study's export (all participants)

	Acknowledged int // answers that got 201 or 200
	Lost         int // acknowledged, not in the export
	Duplicated   int // acknowledged, in the export more than once
	WrongCloser  int // acknowledged, in the export with another closer

	// Unacknowledged answers got no definite reply (a connection failure
	// or a 5xx on the last attempt before the run ended): they may or may
	// not have been stored, and either is correct.
	Unacknowledged       int
	UnacknowledgedStored int

	// Rejected answers got a 4xx: the server promises that nothing was
	// stored for them.
	Rejected       int
	RejectedStored int
}

// OK says whether the check passed.
func (c *Check) OK() bool {
	return c.Lost == 0 && c.Duplicated == 0 && c.WrongCloser == 0 && c.RejectedStored == 0
}

// Problems lists what failed, in words ("" when OK).
func (c *Check) Problems() string {
	if c.OK() {
		return ""
	}
	return fmt.Sprintf("%d lost, %d duplicated, %d stored with another closer, %d rejected but stored",
		c.Lost, c.Duplicated, c.WrongCloser, c.RejectedStored)
}

// exportDeadline bounds how long the export is retried while the server
// answers 5xx or cannot be reached.
const exportDeadline = time.Minute

// checkExport downloads the study's triplets.csv (with excluded
// participants' answers too) and compares it with what was sent.
func checkExport(ctx context.Context, cfg *Config, sent []sentAnswer) (*Check, error) {
	type tally struct {
		closer   int
		choices  string
		state    answerState
		rows     int
		mismatch bool
	}
	byID := make(map[string]*tally, len(sent))
	for _, s := range sent {
		if prev, dup := byID[s.questionID]; dup {
			// The server gave the same question twice (next repeats an
			// open question until it is answered): keep the best-known fate.
			if s.state < prev.state {
				prev.state, prev.closer, prev.choices = s.state, s.closer, s.choices
			}
			continue
		}
		byID[s.questionID] = &tally{closer: s.closer, choices: s.choices, state: s.state}
	}
	// Odd-one-out and rank trials (issue 27) are checked in the
	// all-answers export: one row per trial, with its choices
	// (triplets.csv has each trial's derived triplets).
	trials := false
	for _, s := range sent {
		trials = trials || s.choices != ""
	}

	body, err := downloadExport(ctx, cfg, trials)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	cr := csv.NewReader(bufio.NewReaderSize(body, 64<<10))
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("reading the export's header: %w", err)
	}
	qcol, ccol, chcol := -1, -1, -1
	for i, h := range header {
		switch h {
		case "question_id":
			qcol = i
		case "closer":
			ccol = i
		case "choices":
			chcol = i
		}
	}
	if qcol < 0 || ccol < 0 {
		return nil, fmt.Errorf("the export's header %q lacks question_id or closer", header)
	}
	c := &Check{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the export after %d rows: %w", c.ExportRows, err)
		}
		c.ExportRows++
		t, ok := byID[rec[qcol]]
		if !ok {
			continue // someone else's answer
		}
		t.rows++
		if t.choices != "" {
			if chcol < 0 || rec[chcol] != t.choices {
				t.mismatch = true
			}
			continue
		}
		closer, err := strconv.Atoi(rec[ccol])
		if err != nil {
			return nil, fmt.Errorf("export row %d: closer %q is not an item index", c.ExportRows, rec[ccol])
		}
		if closer != t.closer {
			t.mismatch = true
		}
	}
	for _, t := range byID {
		switch t.state {
		case acknowledged:
			c.Acknowledged++
			switch {
			case t.rows == 0:
				c.Lost++
			case t.rows > 1:
				c.Duplicated++
			}
			if t.mismatch {
				c.WrongCloser++
			}
		case unacknowledged:
			c.Unacknowledged++
			if t.rows > 0 {
				c.UnacknowledgedStored++
			}
		case rejected:
			c.Rejected++
			if t.rows > 0 {
				c.RejectedStored++
			}
		}
	}
	return c, nil
}

// downloadExport starts the export (the all-answers export when all),
// retrying connection failures and 5xx (the server may still be
// recovering) for up to exportDeadline.
func downloadExport(ctx context.Context, cfg *Config, all bool) (io.ReadCloser, error) {
	url := cfg.BaseURL + "/api/v1/studies/" + neturl.PathEscape(cfg.Study) + "/triplets.csv?include_excluded=1"
	if all {
		url += "&all_answers=1"
	}
	deadline := time.Now().Add(exportDeadline)
	pause := minPause
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+cfg.AdminToken)
		start := time.Now()
		res, err := cfg.Client.Do(req)
		r := reply{err: err}
		if err == nil {
			r.status, r.hdr = res.StatusCode, res.Header
		}
		if cfg.OnEvent != nil {
			cfg.OnEvent(Event{At: time.Now(), Endpoint: Export, Status: r.status, Latency: time.Since(start)})
		}
		if err == nil && res.StatusCode == http.StatusOK {
			return res.Body, nil
		}
		if err == nil {
			r.body, _ = io.ReadAll(io.LimitReader(res.Body, maxReplyBytes))
			res.Body.Close()
		}
		if !r.retryable() || time.Now().After(deadline) {
			return nil, fmt.Errorf("GET %s: %s", url, r)
		}
		wait := pause/2 + rand.N(pause/2+1)
		pause = min(2*pause, maxPause)
		if after, given := retryAfter(r.hdr, time.Now()); given {
			wait = max(wait, min(after, maxRetryAfter))
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
