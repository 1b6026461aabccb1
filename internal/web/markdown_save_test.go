package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/study"
)

// A study's instructions, debrief and consent are refused on save past
// collect.MaxStudyTextBytes, with the reason and nothing stored; a text of
// exactly the limit is saved.
func TestStudyTextsBoundedOnSave(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.admin()
	long := strings.Repeat(">", study.MaxStudyTextBytes+1)
	for i, field := range []string{"instructions", "debrief", "consent"} {
		form := studyForm(fmt.Sprintf("long-%d", i), "Long")
		form.Set(field, long)
		res := a.do(c, "POST", "/admin/studies", form, nil)
		want := fmt.Sprintf("at most %d bytes", study.MaxStudyTextBytes)
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, want) {
			t.Errorf("%s of %d bytes: %d, want 422 saying %q", field, len(long), res.StatusCode, want)
		}
	}
	if n := a.count(`SELECT count(*) FROM studies`); n != 0 {
		t.Fatalf("%d studies stored from refused forms", n)
	}
	form := studyForm("at-limit", "At the limit")
	form.Set("instructions", long[1:])
	if res := a.do(c, "POST", "/admin/studies", form, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("instructions of %d bytes: %d %s", len(long)-1, res.StatusCode, res.body)
	}
}
