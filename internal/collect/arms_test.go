package collect_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/basis"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/landmark"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// armStudy creates an open study running arms with held-out share h and n
// items (inserted directly, as designStudy does).
func armStudy(t testing.TB, s *collect.Store, slug string, arms []study.Arm, h float64, n, perParticipant int) study.Study {
	t.Helper()
	ctx := context.Background()
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: slug, Title: slug, QuestionsPerParticipant: perParticipant,
		Status: study.StatusOpen, Arms: arms, HeldoutShare: h})
	if err != nil {
		t.Fatal(err)
	}
	collect.InsertLabelItems(t, collect.PoolOf(s), st.ID, n)
	return st
}

// threeArms are random arms with shares 0.5, 0.3 and 0.2.
var threeArms = []study.Arm{
	{Name: "half", Design: study.DesignRandom, Share: 0.5},
	{Name: "third", Design: study.DesignRandom, Share: 0.3},
	{Name: "fifth", Design: study.DesignRandom, Share: 0.2},
}

// participantArms returns the arms of the study's participants in the
// order they joined (by id).
func participantArms(t *testing.T, pool *pgxpool.Pool, studyID int64) []int {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT arm FROM participants WHERE study_id = $1 ORDER BY id`, studyID)
	if err != nil {
		t.Fatal(err)
	}
	arms, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	return arms
}

// checkProportions fails unless every prefix of the assignment holds each
// arm within one participant of its share (Tijdeman's bound for three
// arms, 1 − 1/(2A − 2) = 3/4), every block of ten exactly 5, 3, 2, and the
// study's arm counts agree with the participants.
func checkProportions(t *testing.T, pool *pgxpool.Pool, studyID int64, arms []int) {
	t.Helper()
	shares := []float64{0.5, 0.3, 0.2}
	counts := make([]int, 3)
	for i, a := range arms {
		counts[a]++
		for j, s := range shares {
			if d := math.Abs(float64(counts[j]) - s*float64(i+1)); d > 0.75+1e-9 {
				t.Fatalf("after %d participants arm %d has %d, %.2f from its share %g: %v", i+1, j, counts[j], d, s, arms)
			}
		}
		if (i+1)%10 == 0 && !slices.Equal(counts, []int{5 * (i + 1) / 10, 3 * (i + 1) / 10, 2 * (i + 1) / 10}) {
			t.Fatalf("after %d participants the arms hold %v", i+1, counts)
		}
	}
	var stored []int32
	if err := pool.QueryRow(context.Background(), `SELECT counts FROM arm_counts WHERE study_id = $1`, studyID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	for j := range counts {
		if int(stored[j]) != counts[j] {
			t.Fatalf("arm_counts %v, participants %v", stored, counts)
		}
	}
}

// Participants join arms 0.5/0.3/0.2 by design.NextArm: every prefix of the
// joins is within one participant of the shares, one after the other and
// with 16 joining at once (the join's lock on the arm counts orders them,
// and the participants' ids follow that order); an external id that joins
// again resumes with its arm and is not counted twice.
func TestArmsProportions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, _ := designStore(pool)

	st := armStudy(t, s, "seq", threeArms, 0, 5, 10)
	var got []int
	for i := range 60 {
		p, _, err := s.CreateParticipant(ctx, st.ID, fmt.Sprint("w", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p.Arm)
	}
	want := make([]int, 60)
	counts := make([]int, 3)
	for i := range want {
		want[i] = design.NextArm([]float64{0.5, 0.3, 0.2}, counts)
		counts[want[i]]++
	}
	if !slices.Equal(got, want) {
		t.Fatalf("arms %v, want design.NextArm's %v", got, want)
	}
	checkProportions(t, pool, st.ID, participantArms(t, pool, st.ID))
	// Resuming keeps the arm, and counts nobody.
	for _, i := range []int{0, 1, 7} {
		p, _, err := s.CreateParticipant(ctx, st.ID, fmt.Sprint("w", i), nil)
		if err != nil || !p.Resumed || p.Arm != want[i] {
			t.Fatalf("w%d again: resumed %v arm %d, %v; want arm %d", i, p.Resumed, p.Arm, err, want[i])
		}
		pr, err := s.Next(ctx, p.ID)
		if err != nil || pr.Question == nil {
			t.Fatal(pr, err)
		}
	}
	checkProportions(t, pool, st.ID, participantArms(t, pool, st.ID))
	rows, err := s.ListParticipants(ctx, st.ID, 100)
	if err != nil || len(rows) != 60 || rows[len(rows)-1].Arm != want[0] || rows[len(rows)-2].Arm != want[1] {
		t.Fatalf("ListParticipants: %d rows, %v", len(rows), err)
	}

	conc := armStudy(t, s, "concurrent", threeArms, 0, 5, 10)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				ext := ""
				if i%2 == 0 {
					ext = fmt.Sprintf("g%d-%d", g, i)
				}
				if _, _, err := s.CreateParticipant(ctx, conc.ID, ext, nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	arms := participantArms(t, pool, conc.ID)
	if len(arms) != 80 {
		t.Fatalf("%d participants, want 80", len(arms))
	}
	checkProportions(t, pool, conc.ID, arms)
}

// The arms' settings are checked with messages for the researcher, and
// frozen (with the held-out share) once a question was issued; before,
// changing the arms assigns the participants who joined again.
func TestArmsSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, _ := designStore(pool)
	lm := func(name string, share float64) study.Arm {
		return study.Arm{Name: name, Design: study.DesignLandmarkK1, Config: study.DesignConfig{Landmarks: 3}, Share: share}
	}
	rnd := func(name string, share float64) study.Arm {
		return study.Arm{Name: name, Design: study.DesignRandom, Share: share}
	}
	for _, c := range []struct {
		arms []study.Arm
		h    float64
		msg  string
	}{
		{[]study.Arm{rnd("a", 1)}, 0, "between 2 and 8 arms"},
		{[]study.Arm{rnd("a", .1), rnd("b", .1), rnd("c", .1), rnd("d", .1), rnd("e", .1), rnd("f", .1), rnd("g", .1), rnd("h", .1), rnd("i", .2)}, 0, "between 2 and 8 arms"},
		{[]study.Arm{rnd("A", .5), rnd("b", .5)}, 0, `the name "A" must be`},
		{[]study.Arm{rnd("", .5), rnd("b", .5)}, 0, `the name "" must be`},
		{[]study.Arm{rnd(strings.Repeat("x", 33), .5), rnd("b", .5)}, 0, "must be 1 to 32"},
		{[]study.Arm{rnd("a", .5), rnd("a", .5)}, 0, `two arms are named "a"`},
		{[]study.Arm{rnd("a", .5), {Name: "b", Design: "bogus", Share: .5}}, 0, `unknown design "bogus"`},
		{[]study.Arm{rnd("a", .5), rnd("b", .4)}, 0, "sum to 1"},
		{[]study.Arm{rnd("a", 1), rnd("b", 0)}, 0, "positive"},
		{[]study.Arm{rnd("a", .5), {Name: "lm", Design: study.DesignLandmarkK1, Config: study.DesignConfig{Landmarks: 1}, Share: .5}}, 0,
			"arm lm: a landmark design needs at least 2 landmarks"},
		{[]study.Arm{rnd("a", .5), {Name: "b", Design: study.DesignBasis, Config: study.DesignConfig{Repeats: 2}, Share: .5}}, 0, "arm b: basis design"},
		{[]study.Arm{rnd("a", .5), {Name: "act", Design: study.DesignActive, Config: study.DesignConfig{Score: "nope"}, Share: .5}}, 0,
			`arm act: unknown score "nope"`},
		{nil, 0.6, "held-out share must be between 0 and 0.5"},
		{nil, -0.1, "held-out share must be between 0 and 0.5"},
	} {
		_, err := s.CreateStudy(ctx, study.StudyInput{Slug: "bad", Title: "bad", QuestionsPerParticipant: 5, Arms: c.arms, HeldoutShare: c.h})
		if collect.KindOf(err) != study.KindInvalid || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v, held out %g: %v; want %q", c.arms, c.h, err, c.msg)
		}
	}

	// Good arms: the study's design is the first arm's, the settings are
	// normalised (seeds drawn, defaults written).
	arms := []study.Arm{lm("lm", 0.5), {Name: "act", Design: study.DesignActive, Share: 0.25}, rnd("rnd", 0.25)}
	st := armStudy(t, s, "arms", arms, 0.1, 9, 10)
	if st.Design != study.DesignLandmarkK1 || len(st.Arms) != 3 || st.HeldoutShare != 0.1 || st.Arms[0].Config.Seed == 0 ||
		st.Arms[1].Config.Warmup != 10 || st.Arms[1].Config.Score != "uncertainty" || st.Arms[1].Config.Model != "tste" ||
		st.Arms[1].Config.Candidates != 1000 || st.Arms[1].Config.Repeats != 1 || st.Arms[1].Config.Seed == 0 {
		t.Fatalf("stored %+v", st)
	}
	if cfg, err := s.DesignConfigOf(ctx, st.ID); err != nil || cfg.Landmarks != 3 || cfg.Seed != st.Arms[0].Config.Seed {
		t.Fatalf("design config %+v, %v: want the first arm's", cfg, err)
	}
	got, err := s.StudyArms(ctx, st.ID)
	if err != nil || len(got) != 3 || got[2].Name != "rnd" {
		t.Fatalf("StudyArms %v, %v", got, err)
	}
	// Before the first question: participants who joined are assigned
	// again when the arms change.
	in := study.StudyInput{Slug: "arms", Title: "arms", QuestionsPerParticipant: 10, Status: study.StatusOpen,
		Arms: st.Arms, HeldoutShare: 0.1}
	var ps []study.Participant
	for range 4 {
		p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	if a := participantArms(t, pool, st.ID); !slices.Equal(a, []int{0, 1, 2, 0}) {
		t.Fatalf("arms %v", a)
	}
	in.Arms = []study.Arm{rnd("x", 0.5), rnd("y", 0.5)}
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	if a := participantArms(t, pool, st.ID); !slices.Equal(a, []int{0, 1, 0, 1}) {
		t.Fatalf("after two arms: %v", a)
	}
	in.Arms = nil
	in.Design = study.DesignRandom
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	if a := participantArms(t, pool, st.ID); !slices.Equal(a, []int{0, 0, 0, 0}) {
		t.Fatalf("without arms: %v", a)
	}
	in.Arms = arms
	if st, err = s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(ctx, ps[0].ID); err != nil {
		t.Fatal(err)
	}
	// Frozen now: the arms, their settings, the held-out share.
	in.Arms = st.Arms
	changed := slices.Clone(st.Arms)
	changed[0].Config.Landmarks = 4
	for name, f := range map[string]func(*study.StudyInput){
		"shares": func(in *study.StudyInput) {
			in.Arms = []study.Arm{st.Arms[0], st.Arms[1], st.Arms[2]}
			in.Arms[0].Share, in.Arms[1].Share = 0.25, 0.5
		},
		"settings": func(in *study.StudyInput) { in.Arms = changed },
		"names":    func(in *study.StudyInput) { in.Arms = slices.Clone(st.Arms); in.Arms[2].Name = "other" },
		"no arms":  func(in *study.StudyInput) { in.Arms = nil },
		"held out": func(in *study.StudyInput) { in.HeldoutShare = 0.2 },
	} {
		in := in
		in.Arms = slices.Clone(st.Arms)
		f(&in)
		if _, err := s.UpdateStudy(ctx, st.ID, in); collect.KindOf(err) != study.KindConflict || !strings.Contains(err.Error(), "cannot change after questions were issued") {
			t.Errorf("%s changed after a question: %v", name, err)
		}
	}
	in.Title = "renamed"
	in.Arms = st.Arms
	if _, err := s.UpdateStudy(ctx, st.ID, in); err != nil {
		t.Errorf("the title after a question, the arms unchanged: %v", err)
	}
}

// armEvents returns the answers the design of one arm recorded, in order.
func armEvents(t *testing.T, pool *pgxpool.Pool, studyID int64, arm int) []triplet.Triplet {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT anchor, closer, farther FROM design_events
		WHERE study_id = $1 AND arm = $2 ORDER BY version`, studyID, arm)
	if err != nil {
		t.Fatal(err)
	}
	events, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (triplet.Triplet, error) {
		var tr triplet.Triplet
		err := row.Scan(&tr.Anchor, &tr.Closer, &tr.Farther)
		return tr, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// armAnswers returns the answers of the arm's participants to questions
// recorded as design, sorted.
func armAnswers(t *testing.T, pool *pgxpool.Pool, studyID int64, arm int, design string) []triplet.Triplet {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT a.anchor, a.closer, a.farther FROM answers a
		JOIN questions q ON q.id = a.question_id JOIN participants p ON p.id = a.participant_id
		WHERE a.study_id = $1 AND p.arm = $2 AND q.design = $3`, studyID, arm, design)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (triplet.Triplet, error) {
		var tr triplet.Triplet
		err := row.Scan(&tr.Anchor, &tr.Closer, &tr.Farther)
		return tr, err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(ts, tripletOrder)
	return ts
}

func tripletOrder(a, b triplet.Triplet) int {
	if c := a.Anchor - b.Anchor; c != 0 {
		return c
	}
	if c := a.Closer - b.Closer; c != 0 {
		return c
	}
	return a.Farther - b.Farther
}

// Two stateful arms in one study, a landmark-k1 arm with repeats 2 and a
// basis arm, keep separate states, pools and leases: each arm's design
// records exactly its own participants' answers to its own questions, its
// participants get only its questions (or fallbacks), no landmark
// comparison goes out more than twice, and the leases and pool rows of
// each arm are its own.
func TestTwoStatefulArms(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s, _ := designStore(pool)
	const n = 12
	arms := []study.Arm{
		{Name: "lm", Design: study.DesignLandmarkK1, Config: study.DesignConfig{Seed: 1, Landmarks: 3, Repeats: 2}, Share: 0.5},
		{Name: "basis", Design: study.DesignBasis, Config: study.DesignConfig{Seed: 2}, Share: 0.5},
	}
	st := armStudy(t, s, "two", arms, 0, n, 15)
	o := triplet.NewOracle(triplet.Gaussian(triplet.NewRand(3), n, 2, 1), 0, 1)
	// Participants in rounds of four, each holding a question at once.
	for round := range 4 {
		var ps []study.Participant
		var qs []*study.Question
		for range 4 {
			p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		}
		for k := 0; k < 15; k++ {
			qs = qs[:0]
			for _, p := range ps {
				pr, err := s.Next(ctx, p.ID)
				if err != nil {
					t.Fatal(err)
				}
				if pr.Done {
					qs = append(qs, nil)
					continue
				}
				q := pr.Question
				ok := q.Design == study.DesignFallback || q.Design == arms[p.Arm].Design
				if !ok {
					t.Fatalf("round %d: a participant of arm %d got a %s question", round, p.Arm, q.Design)
				}
				qs = append(qs, q)
			}
			// Each arm's leases are its participants'.
			var wrong int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM design_leases l JOIN participants p ON p.id = l.participant_id
				WHERE l.study_id = $1 AND l.arm <> p.arm`, st.ID).Scan(&wrong); err != nil || wrong != 0 {
				t.Fatalf("%d leases in another arm than their participant's, %v", wrong, err)
			}
			for i, q := range qs {
				if q == nil {
					continue
				}
				if _, err := s.Answer(ctx, ps[i].ID, study.AnswerInput{QuestionID: q.ID, Closer: answerFor(o, q)}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	recorded(t, s)
	for a, name := range []string{study.DesignLandmarkK1, study.DesignBasis} {
		got := armEvents(t, pool, st.ID, a)
		if len(got) == 0 {
			t.Fatalf("arm %d recorded nothing", a)
		}
		slices.SortFunc(got, tripletOrder)
		if want := armAnswers(t, pool, st.ID, a, name); !slices.Equal(got, want) {
			t.Errorf("arm %d (%s) recorded %d answers, its participants gave %d to its questions", a, name, len(got), len(want))
		}
	}
	d0, err := s.DesignState(ctx, st.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	lm, ok := d0.(*landmark.Design)
	if !ok {
		t.Fatalf("arm 0's state is %T", d0)
	}
	for i := range lm.Comparisons() {
		if lm.Count(i) > 2 {
			t.Fatalf("comparison %d answered %d times, repeats 2", i, lm.Count(i))
		}
	}
	if d1, err := s.DesignState(ctx, st.ID, 1); err != nil {
		t.Fatal(err)
	} else if _, ok := d1.(*basis.Scheme); !ok {
		t.Fatalf("arm 1's state is %T", d1)
	}
	// Every landmark comparison handed out at most twice; every pool row
	// of arm 0 is a comparison of its design.
	var most int
	if err := pool.QueryRow(ctx, `SELECT coalesce(max(c), 0) FROM (SELECT count(*) AS c FROM questions q JOIN participants p ON p.id = q.participant_id
		WHERE q.study_id = $1 AND q.design = 'landmark-k1' GROUP BY q.anchor, least(q.left_idx, q.right_idx), greatest(q.left_idx, q.right_idx)) x`,
		st.ID).Scan(&most); err != nil || most > 2 || most == 0 {
		t.Fatalf("a landmark comparison handed out %d times, %v", most, err)
	}
	rows, err := pool.Query(ctx, `SELECT arm, anchor, j, k FROM design_pool WHERE study_id = $1`, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var arm int
		var k triplet.Key
		if err := rows.Scan(&arm, &k.Anchor, &k.J, &k.K); err != nil {
			t.Fatal(err)
		}
		if _, ok := lm.Index(k); arm == 0 && !ok {
			t.Errorf("arm 0's pool holds %v, not a landmark comparison", k)
		}
	}
	rows.Close()
	statuses, err := s.DesignStatuses(ctx, st)
	if err != nil || len(statuses) != 2 || statuses[0].ArmName != "lm" || statuses[1].Design != study.DesignBasis ||
		!statuses[0].Started || statuses[0].Progress.Landmark == nil || statuses[1].Progress.Basis == nil {
		t.Fatalf("statuses %+v, %v", statuses, err)
	}
	total := statuses[0].Answers + statuses[1].Answers
	if stats, err := s.StudyStats(ctx, st.ID); err != nil || stats.Answers != total {
		t.Fatalf("the arms' answers %d, the study's %d, %v", total, stats.Answers, err)
	}
}
