package web

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/i18n"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// The landing, done and MTurk preview pages render each of a study's texts
// once, however often they are viewed (they used to render on every view:
// 16 s of CPU a view for 99,000 ">").
func TestStudyPagesRenderEachTextOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	cfg := Config{}
	cfg.loginDefaults()
	lang, err := i18n.New()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{store: store, cfg: cfg, log: slog.New(slog.NewTextHandler(io.Discard, nil)), dash: newDashCache(store), lang: lang}
	r := chi.NewRouter()
	r.Get("/s/{slug}", s.handle(s.landing))
	r.Get("/s/{slug}/done", s.handle(s.done))
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)

	open, err := store.CreateStudy(ctx, study.StudyInput{Slug: "open", Title: "Open", QuestionsPerParticipant: 1, Status: study.StatusOpen,
		Instructions: "Pick the **closer** one.", Consent: "I *agree*.", Debrief: "Thanks, _friend_."})
	if err != nil {
		t.Fatal(err)
	}
	turk, err := store.CreateStudy(ctx, study.StudyInput{Slug: "turk", Title: "Turk", QuestionsPerParticipant: 1, Status: study.StatusOpen,
		Instructions: "On MTurk: pick the `closer` one.", Platform: study.Platform{Kind: study.PlatformMTurk}})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []study.Study{open, turk} {
		if _, _, err := store.AddItems(ctx, st.ID, demo.Items()[:3]); err != nil {
			t.Fatal(err)
		}
	}
	p, token, err := store.CreateParticipant(ctx, open.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := store.Next(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Answer(ctx, p.ID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index}); err != nil {
		t.Fatal(err)
	}

	get := func(path, cookie, want string) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: participantCookie, Value: cookie})
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Fatalf("GET %s: %d, want 200 with %q:\n%s", path, res.StatusCode, want, body)
		}
	}
	for range 3 {
		get("/s/open", "", "<strong>closer</strong>") // instructions and consent
		get("/s/open/done", token, "<em>friend</em>") // debrief
		get("/s/turk", "", "<code>closer</code>")     // MTurk preview: instructions
		get("/s/turk?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE", "", "<code>closer</code>")
	}
	if n := s.texts.renders.Load(); n != 4 {
		t.Errorf("4 texts shown 15 times were rendered %d times, want 4 (once each)", n)
	}
}
