package dashboard_test

import (
	"context"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/dashboard"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// figuresEqual reports whether two dashboards show the same figures (NaN
// medians equal, times by value).
func figuresEqual(t *testing.T, what string, gotS, wantS study.Stats, got, want dashboard.Figures) {
	t.Helper()
	sameTime := func(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }
	if !sameTime(gotS.LastAnswer, wantS.LastAnswer) {
		t.Fatalf("%s: last answer %v, from scratch %v", what, gotS.LastAnswer, wantS.LastAnswer)
	}
	gotS.LastAnswer, wantS.LastAnswer = nil, nil
	if gotS != wantS {
		t.Fatalf("%s: stats %+v, from scratch %+v", what, gotS, wantS)
	}
	if !sameTime(got.First, want.First) || !sameTime(got.Last, want.Last) {
		t.Fatalf("%s: span %v–%v, from scratch %v–%v", what, got.First, got.Last, want.First, want.Last)
	}
	got.First, got.Last, want.First, want.Last = nil, nil, nil, nil
	if math.IsNaN(got.MedianResponseMS) && math.IsNaN(want.MedianResponseMS) {
		got.MedianResponseMS, want.MedianResponseMS = 0, 0
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: figures\n%+v\nfrom scratch\n%+v", what, got, want)
	}
}

// participantsBySQL is the dashboard's participants table counted in SQL,
// independently of the tally: those with answers, most triplet answers
// first (then by id), at most limit after offset, and how many there are.
// A row's count is every question answered (triplets and trial answers).
func participantsBySQL(t *testing.T, pool *pgxpool.Pool, studyID int64, limit, offset int) ([]study.DashboardParticipant, int) {
	t.Helper()
	ctx := context.Background()
	rows, err := pool.Query(ctx, `
		SELECT p.id, p.public_id, coalesce(p.external_id, ''),
			c.n + (SELECT count(*) FROM trial_answers x WHERE x.participant_id = p.id),
			p.arm, coalesce(p.completion_code, ''), p.excluded_at, coalesce(p.excluded_reason, ''), p.created_at
		FROM participants p
		JOIN (SELECT participant_id, count(*) AS n FROM answers WHERE study_id = $1 GROUP BY participant_id) c
			ON c.participant_id = p.id
		ORDER BY c.n DESC, p.id
		LIMIT $2 OFFSET $3`, studyID, limit, offset)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (study.DashboardParticipant, error) {
		var p study.DashboardParticipant
		err := r.Scan(&p.ID, &p.PublicID, &p.ExternalID, &p.Answers, &p.Arm, &p.Code, &p.ExcludedAt, &p.ExcludedReason, &p.CreatedAt)
		return p, err
	})
	if err != nil {
		t.Fatal(err)
	}
	var total int
	if err := pool.QueryRow(ctx, `SELECT count(DISTINCT participant_id) FROM answers WHERE study_id = $1`, studyID).Scan(&total); err != nil {
		t.Fatal(err)
	}
	return ps, total
}

// participantsPage is the dashboard's participants table as the page reads
// it: a page of the tally's counts, their rows from the store.
func participantsPage(t *testing.T, s *collect.Store, studyID int64, tally *dashboard.Tally, limit, offset int) ([]study.DashboardParticipant, int) {
	t.Helper()
	all := tally.ParticipantsByAnswers(nil)
	page := all[min(offset, len(all)):min(offset+limit, len(all))]
	ids := make([]int64, len(page))
	for i, p := range page {
		ids[i] = p.ID
	}
	rows, err := s.DashboardParticipants(context.Background(), studyID, ids)
	if err != nil {
		t.Fatal(err)
	}
	return dashboard.InPageOrder(page, rows), len(all)
}

// load counts the study from scratch, keeping the top 4 contradicted.
func load(t *testing.T, s *collect.Store, studyID int64) *dashboard.Tally {
	t.Helper()
	c, err := s.DashboardCounts(context.Background(), studyID, 4)
	if err != nil {
		t.Fatal(err)
	}
	return dashboard.NewTally(c, 4)
}

// advance reads the answers after the tally's watermark and adds them.
func advance(t *testing.T, s *collect.Store, studyID int64, tally *dashboard.Tally) bool {
	t.Helper()
	d, err := s.DashboardAnswersAfter(context.Background(), studyID, tally.Seq)
	if err != nil {
		t.Fatal(err)
	}
	return tally.Advance(d)
}

// A tally advanced over several rounds of new answers (from several
// participants, spread over time, some without a response time) shows the
// figures of a tally counted from scratch, and its counts and participants
// page agree with StudyStats and with the table counted in SQL.
func TestTallyAdvanceEqualsScratch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "s1", Title: "S1", QuestionsPerParticipant: 1000, Status: study.StatusOpen})
	if err != nil {
		t.Fatal(err)
	}
	if _, rej, err := s.AddItems(ctx, st.ID, demo.Items()[:6]); err != nil || len(rej) > 0 {
		t.Fatalf("add items: %v %v", rej, err)
	}
	tally := load(t, s, st.ID)
	if tally.Answers != 0 || tally.Seq != 0 {
		t.Fatalf("empty study: %+v", tally)
	}
	rng := triplet.NewRand(7)
	var people []int64
	base := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for round := range 6 {
		p, _, err := s.CreateParticipant(ctx, st.ID, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		people = append(people, p.ID)
		for range 5 + 3*round {
			pid := people[rng.IntN(len(people))]
			pr, err := s.Next(ctx, pid)
			if err != nil {
				t.Fatal(err)
			}
			if pr.Done {
				continue
			}
			q := pr.Question
			closer := q.Options[0].Index
			if rng.IntN(2) == 0 {
				closer = q.Options[1].Index
			}
			var ms *int
			if rng.IntN(5) > 0 {
				x := 300 + rng.IntN(5000)
				ms = &x
			}
			if _, err := s.Answer(ctx, pid, study.AnswerInput{QuestionID: q.ID, Closer: closer, ResponseMS: ms}); err != nil {
				t.Fatal(err)
			}
		}
		// Spread the new answers over the round's hour (sub-second times,
		// so the per-second time buckets are exercised).
		if _, err := pool.Exec(ctx, `UPDATE answers SET answered_at = $3::timestamptz + seq * interval '917 milliseconds'
			WHERE study_id = $1 AND seq > $2`, st.ID, tally.Seq, base.Add(time.Duration(round)*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if !advance(t, s, st.ID, tally) {
			t.Fatalf("round %d: advance refused", round)
		}
		fresh := load(t, s, st.ID)
		gotS, got := tally.Figures(12, 8)
		wantS, want := fresh.Figures(12, 8)
		figuresEqual(t, "round", gotS, wantS, got, want)
		if tally.Seq != fresh.Seq {
			t.Fatalf("round %d: watermark %d, from scratch %d", round, tally.Seq, fresh.Seq)
		}
		stats, err := s.StudyStats(ctx, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		if gotS.Answers != stats.Answers || gotS.Comparisons != stats.Comparisons || gotS.Contradictions != stats.Contradictions ||
			gotS.Participants != stats.Participants || gotS.Completed != stats.Completed {
			t.Fatalf("round %d: tally %+v, StudyStats %+v", round, gotS, stats)
		}
		if n := sum(got.AnswersOverTime); n != stats.Answers {
			t.Fatalf("round %d: answers over time add up to %d of %d", round, n, stats.Answers)
		}
		if round == 5 && (stats.Contradictions == 0 || len(got.Contradicted) == 0) {
			t.Fatalf("no contradiction after %d answers: the top list is not exercised", stats.Answers)
		}
		for _, offset := range []int{0, 2, 1000} {
			gotP, gotN := participantsPage(t, s, st.ID, tally, 2, offset)
			wantP, wantN := participantsBySQL(t, pool, st.ID, 2, offset)
			if gotN != wantN || (stats.Answers > 0 && wantN == 0) || (len(gotP)+len(wantP) > 0 && !reflect.DeepEqual(gotP, wantP)) {
				t.Fatalf("round %d: participants from %d: %+v (%d), want %+v (%d)", round, offset, gotP, gotN, wantP, wantN)
			}
		}
	}

	// An answer that takes its sequence number first but commits after a
	// later one (and after an advance that moved the watermark past it)
	// is noticed: the advance refuses and a count from scratch has it.
	// (Different comparisons, so the second does not wait on the first's vote.)
	insert := func(tx pgx.Tx, qid string, pid int64, anchor int) {
		t.Helper()
		for _, q := range []string{
			`INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design)
				VALUES ($1, $2, $3, $4, 1, 2, 'import')`,
			`INSERT INTO answers (question_id, study_id, participant_id, anchor, closer, farther, response_ms)
				VALUES ($1, $2, $3, $4, 1, 2, 1234)`,
		} {
			if _, err := tx.Exec(ctx, q, qid, st.ID, pid, anchor); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO votes (study_id, anchor, j, k, j_closer) VALUES ($1, $2, 1, 2, 1)
			ON CONFLICT (study_id, anchor, j, k) DO UPDATE SET j_closer = votes.j_closer + 1`, st.ID, anchor); err != nil {
			t.Fatal(err)
		}
	}
	slow, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Rollback(ctx)
	insert(slow, "late-1", people[0], 0)
	fast, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	insert(fast, "late-2", people[1], 3)
	if err := fast.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if !advance(t, s, st.ID, tally) {
		t.Fatal("advance past the fast answer refused")
	}
	if err := slow.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if advance(t, s, st.ID, tally) {
		t.Fatal("advance after a late commit below the watermark: accepted; want refused")
	}
	if fresh := load(t, s, st.ID); fresh.Answers != tally.Answers+1 {
		t.Fatalf("from scratch: %v answers, want %d", fresh.Answers, tally.Answers+1)
	}
	tally = load(t, s, st.ID)

	// Removing an answer below the watermark (or one committed late below
	// it) is noticed: the advance refuses and leaves the tally unchanged.
	beforeS, beforeF := tally.Figures(12, 8)
	before := *tally
	if _, err := pool.Exec(ctx, `DELETE FROM answers WHERE seq = (SELECT min(seq) FROM answers WHERE study_id = $1)`, st.ID); err != nil {
		t.Fatal(err)
	}
	if advance(t, s, st.ID, tally) {
		t.Fatal("advance after a removed answer: accepted; want refused")
	}
	if tally.Answers != before.Answers || tally.Seq != before.Seq {
		t.Fatalf("tally changed by a refused advance: %+v", tally)
	}
	afterS, afterF := tally.Figures(12, 8)
	figuresEqual(t, "refused advance", afterS, beforeS, afterF, beforeF)
}

func sum(x []int) int {
	n := 0
	for _, v := range x {
		n += v
	}
	return n
}
