package web_test

import (
	"context"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/loadgen"
)

// TestLoadFormats: closer load speaks every format: simulated annotators
// answer an odd-one-out and a rank 5-choose-2 study through the JSON API
// (the odd one, or the choices in order, drawn at random), and the
// exactly-once check finds every acknowledged trial once in the
// all-answers export with the choices sent.
func TestLoadFormats(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.admin()
	formatStudyByForm(t, a, c, "loadodd", "odd-one-out", "", "", 8, 10)
	formatStudyByForm(t, a, c, "loadrank", "rank", "5", "2", 9, 10)
	admin, err := a.accounts.CreateAdmin(context.Background(), "load@example.org", "long-password")
	if err != nil {
		t.Fatal(err)
	}
	token, _, err := a.accounts.CreateAPIToken(context.Background(), admin.ID, "load")
	if err != nil {
		t.Fatal(err)
	}
	for _, slug := range []string{"loadodd", "loadrank"} {
		res, err := loadgen.Run(context.Background(), loadgen.Config{BaseURL: a.srv.URL, Study: slug, Concurrency: 4,
			Duration: time.Minute, MaxAnswers: 60, AdminToken: token, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		if res.Check == nil || !res.Check.OK() || res.Check.Acknowledged < 60 || res.Check.Rejected > 0 {
			t.Fatalf("%s: check %+v (%s)", slug, res.Check, res.Check.Problems())
		}
	}
}
