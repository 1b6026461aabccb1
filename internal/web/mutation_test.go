package web_test

// Tests for mutants that lived in the mutation-testing sample of this
// package (docs/mutation/http.md): each pins a boundary the other tests
// left open.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/recompute"
	"github.com/closer-lab/closer/internal/study"
)

// After login, a next path whose decoded form holds a space (%20) is kept:
// only control characters (below a space) and DEL are refused in the
// decoded path, since a browser strips neither an encoded space nor
// anything else from it (a raw space is refused: TestSafeNext).
func TestLoginNextDecodedControlBoundary(t *testing.T) {
	t.Parallel()
	a := newThrottleApp(t)
	for next, want := range map[string]string{
		"/admin/studies/a%20b": "/admin/studies/a%20b",
		"/admin/studies/a%21b": "/admin/studies/a%21b",
		"/admin/studies/a%1Fb": "/admin",
		"/admin/studies/a%7Fb": "/admin",
	} {
		res := a.do(a.client(), "POST", "/admin/login", url.Values{"email": {"r@example.org"}, "password": {"secret-password"}, "next": {next}}, nil)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
			t.Errorf("next=%q: %d Location %q, want %q", next, res.StatusCode, res.Header.Get("Location"), want)
		}
	}
}

// The throttle's warnings carry the typed e-mail only when it looks like an
// address: up to 254 bytes (the longest an address can be) and without
// spaces; anything else is logged as "(not an e-mail address)".
func TestLoginLogKeepsOnlyAddresses(t *testing.T) {
	t.Parallel()
	a := newThrottleApp(t)
	c := a.client()
	longest := strings.Repeat("a", 254-len("@example.org")) + "@example.org"
	tooLong := strings.Repeat("b", 255-len("@example.org")) + "@example.org"
	spaced := "pass word@example.org" // a password typed into the e-mail field
	for _, email := range []string{longest, tooLong, spaced} {
		for i := 1; i <= 5; i++ {
			wantStatus(t, fmt.Sprintf("%.20s... failure %d", email, i), a.login(c, email, "wrong-password", nil), http.StatusUnauthorized)
		}
		wantThrottled(t, fmt.Sprintf("%.20s... 6th attempt", email), a.login(c, email, "wrong-password", nil), 2)
	}
	logs := a.log.String()
	if !strings.Contains(logs, `msg="login refused: too many failures" limit=account failures=5 retry_after_s=2 email=`+longest+" ") {
		t.Errorf("the 254-byte address is not logged:\n%s", logs)
	}
	if strings.Contains(logs, tooLong) || strings.Contains(logs, "pass word") {
		t.Errorf("a 255-byte e-mail or one with a space is logged:\n%s", logs)
	}
	if n := strings.Count(logs, `email="(not an e-mail address)"`); n < 2 {
		t.Errorf("%d log lines say (not an e-mail address), want at least 2:\n%s", n, logs)
	}
}

var cutRE = regexp.MustCompile(`<path class="cut" d="M10 ([0-9.]+)H340\.0M([0-9.]+) 10V340\.0"/>`)

// The dashboard's heat map draws a line inside the map where the cluster
// changes along the heat map's order: at the fraction a/n of its side for a
// change between the a-th and (a+1)-th of n items.
func TestDashboardHeatmapCutsBetweenClusters(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	st := a.study("cuts", 8, 50, "open")
	admin := a.admin()
	ctx := context.Background()
	if err := a.store.SetRecomputeSettings(ctx, st.ID, study.RecomputeSettings{MinNewAnswers: 200, MaxAge: 10 * time.Minute,
		Method: "tste", Dim: 2, Clusters: 3}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		p, _, err := a.store.CreateParticipant(ctx, st.ID, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		answerSome(t, a.store, p, 15)
	}
	if _, err := recompute.Run(ctx, a.store, st.ID, 0); err != nil {
		t.Fatal(err)
	}
	_, blob, err := a.store.LatestResult(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	res, err := recompute.Decode(blob)
	if err != nil {
		t.Fatal(err)
	}
	n := len(res.HeatmapOrder)
	var want []string
	for i := 1; i < n; i++ {
		if res.Clusters[res.HeatmapOrder[i]] != res.Clusters[res.HeatmapOrder[i-1]] {
			want = append(want, fmt.Sprintf("%.1f", 10+330*float64(i)/float64(n)))
		}
	}
	if n != 8 || len(want) == 0 {
		t.Fatalf("the run has %d items in heat map order and %d cluster changes (clusters %v); the test needs 8 and some", n, len(want), res.Clusters)
	}
	page := a.do(admin, "GET", "/admin/studies/cuts/dashboard", nil, nil)
	if page.StatusCode != 200 || !strings.Contains(page.body, `id="heatmap"`) {
		t.Fatalf("dashboard: %d", page.StatusCode)
	}
	var got []string
	for _, m := range cutRE.FindAllStringSubmatch(page.body, -1) {
		if m[1] != m[2] {
			t.Errorf("a cut's two lines are at %s and %s", m[1], m[2])
		}
		got = append(got, m[1])
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("cuts drawn at %v, want %v (clusters %v, order %v)", got, want, res.Clusters, res.HeatmapOrder)
	}
}
