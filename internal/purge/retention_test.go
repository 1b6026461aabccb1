package purge_test

import (
	"context"
	"testing"

	"github.com/closer-lab/closer/internal/purge"
	"github.com/closer-lab/closer/internal/study"
)

// The retention job blanks the external ids and platform parameters of
// the participants of a study closed longer than its retention, and of no
// other study: one still in its retention, one without a setting, one
// open; closing stamps closed_at, reopening clears it.
func TestRetentionBlanksIdentifiers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, s := newStore(t)
	ids := map[string]int64{}
	for _, c := range []struct {
		slug, status string
		days         int
	}{
		{"expired", "closed", 30}, {"recent", "closed", 30}, {"kept", "closed", 0}, {"open", "open", 30},
	} {
		st, err := s.CreateStudy(ctx, study.StudyInput{Slug: c.slug, Title: c.slug, QuestionsPerParticipant: 3, Status: "open"})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.CreateParticipant(ctx, st.ID, "PROLIFIC-"+c.slug, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.SetRetention(ctx, st.ID, c.days); err != nil {
			t.Fatal(err)
		}
		if err := s.SetStudyStatus(ctx, st.ID, c.status); err != nil {
			t.Fatal(err)
		}
		ids[c.slug] = st.ID
	}
	if days, closed, err := s.Retention(ctx, ids["expired"]); err != nil || days != 30 || closed == nil {
		t.Fatalf("retention of a closed study: %d days, closed %v, %v", days, closed, err)
	}
	// The expired study closed 31 days ago, the recent one 29.
	for slug, ago := range map[string]string{"expired": "31 days", "recent": "29 days", "kept": "400 days"} {
		if _, err := pool.Exec(ctx, `UPDATE studies SET closed_at = now() - $2::interval WHERE id = $1`, ids[slug], ago); err != nil {
			t.Fatal(err)
		}
	}
	n, err := purge.Retention(ctx, s.Store)
	if err != nil || n != 1 {
		t.Fatalf("blanked %d (%v), want the expired study's one participant", n, err)
	}
	for slug, want := range map[string]bool{"expired": false, "recent": true, "kept": true, "open": true} {
		var has bool
		if err := pool.QueryRow(ctx, `SELECT bool_or(external_id IS NOT NULL) FROM participants WHERE study_id = $1`, ids[slug]).Scan(&has); err != nil {
			t.Fatal(err)
		}
		if has != want {
			t.Errorf("%s: external id kept %t, want %t", slug, has, want)
		}
	}
	// Reopening forgets the closing.
	if err := s.SetStudyStatus(ctx, ids["recent"], "open"); err != nil {
		t.Fatal(err)
	}
	if _, closed, err := s.Retention(ctx, ids["recent"]); err != nil || closed != nil {
		t.Errorf("a reopened study's closed_at: %v, %v", closed, err)
	}
	if err := s.SetRetention(ctx, ids["open"], 40000); err == nil {
		t.Error("a retention of 40,000 days was accepted")
	}
}
