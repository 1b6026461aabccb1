package web_test

import (
	"context"
	"testing"

	"github.com/closer-lab/closer/internal/study"
)

// TestMeasuredPace: the study's pace is the median time between a
// participant's consecutive answers, breaks (over store.MaxPaceGap) and
// excluded participants left out; the costs default until set and are
// refused out of bounds.
func TestMeasuredPace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newApp(t)
	st := a.study("pace", 10, 6, study.StatusOpen)
	if sec, n, err := a.store.MeasuredPace(ctx, st.ID); err != nil || n != 0 || sec != 0 {
		t.Fatalf("no answers: %g s over %d gaps, %v", sec, n, err)
	}
	crowdAnswers(t, a.store, st.ID, 3, func(q, l, r int) int { return l })
	if err := a.store.RecordPending(ctx); err != nil {
		t.Fatal(err)
	}
	all, err := a.store.RunAnswers(ctx, st.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	excluded := all[0].Participant
	// Participants' k-th answers 7 s apart, the last one after a break of
	// an hour; the excluded participant's 100 s apart.
	if _, err := a.pool.Exec(ctx, `
		UPDATE answers a SET answered_at = '2026-01-01'::timestamptz + o.k * CASE WHEN a.participant_id = $2 THEN interval '100 s' ELSE interval '7 s' END
			+ CASE WHEN o.k = o.last THEN interval '1 hour' ELSE interval '0' END
		FROM (SELECT question_id, participant_id, row_number() OVER w AS k, count(*) OVER (PARTITION BY participant_id) AS last
			FROM answers WHERE study_id = $1 WINDOW w AS (PARTITION BY participant_id ORDER BY answered_at, question_id)) o
		WHERE a.question_id = o.question_id AND a.participant_id = o.participant_id`, st.ID, excluded); err != nil {
		t.Fatal(err)
	}
	if err := a.store.SetExcluded(ctx, st.ID, all[0].PublicID, true); err != nil {
		t.Fatal(err)
	}
	sec, n, err := a.store.MeasuredPace(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Two kept participants of 6 answers: 5 gaps each, the last a break.
	if sec != 7 || n != 8 {
		t.Errorf("pace %g s over %d gaps, want 7 s over 8", sec, n)
	}
	if c, err := a.store.StudyCosts(ctx, st.ID); err != nil || c != study.DefaultCosts() {
		t.Errorf("costs before any were set: %+v, %v", c, err)
	}
	for _, bad := range []study.Costs{{PayPerHour: -1, Currency: "EUR", SecondsPerQuestion: 5}, {Currency: "", SecondsPerQuestion: 5}, {Currency: "EUR"}} {
		if err := a.store.SetStudyCosts(ctx, st.ID, bad); err == nil {
			t.Errorf("%+v stored", bad)
		}
	}
}
