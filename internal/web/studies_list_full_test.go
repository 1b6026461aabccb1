package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
)

// The studies list marks a study "full" when its participant limit is
// taken, and only then: not below the limit, not without a limit however
// many took part, and no longer once a place is free again (an idle
// participant's).
func TestStudiesListFullBadge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newApp(t)
	c := a.admin()
	limited := a.study("limited", 0, 5, "open")
	open := a.study("unlimited", 0, 5, "open")
	in := study.StudyInput{Slug: limited.Slug, Title: limited.Title, QuestionsPerParticipant: 5, Status: study.StatusOpen,
		Quota: study.Quota{MaxParticipants: 2, IdleMinutes: 30}}
	if _, err := a.store.UpdateStudy(ctx, limited.ID, in); err != nil {
		t.Fatal(err)
	}
	full := func() map[string]bool {
		t.Helper()
		body := a.do(c, "GET", "/admin", nil, nil).body
		out := map[string]bool{}
		for _, row := range strings.Split(body, "<tr>")[1:] {
			for _, slug := range []string{"limited", "unlimited"} {
				if strings.Contains(row, `href="/admin/studies/`+slug+`"`) {
					out[slug] = strings.Contains(row, `class="status status-full"`)
				}
			}
		}
		return out
	}
	join := func(id int64) int64 {
		t.Helper()
		p, _, err := a.store.CreateParticipant(ctx, id, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		return p.ID
	}
	if got := full(); got["limited"] || got["unlimited"] {
		t.Fatalf("no participants yet: full %v", got)
	}
	first := join(limited.ID)
	for range 3 {
		join(open.ID)
	}
	if got := full(); got["limited"] || got["unlimited"] {
		t.Fatalf("one of two places taken: full %v", got)
	}
	join(limited.ID)
	if got := full(); !got["limited"] || got["unlimited"] {
		t.Fatalf("both places taken: full %v, want limited only", got)
	}
	if st, err := a.store.StudyBySlug(ctx, "limited"); err != nil || collect.KindOf(a.store.CanJoin(ctx, st, "", nil)) != study.KindFull {
		t.Fatalf("the badge shows full but a newcomer would be admitted: %v", err)
	}
	// The first participant idle for longer than the limit's idle time:
	// a place is free, the badge gone.
	if _, err := a.pool.Exec(ctx, `UPDATE participants SET last_active_at = now() - interval '1 hour', created_at = now() - interval '1 hour' WHERE id = $1`, first); err != nil {
		t.Fatal(err)
	}
	if got := full(); got["limited"] {
		t.Fatalf("a place free again: full %v", got)
	}
}
