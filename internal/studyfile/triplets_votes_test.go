package studyfile_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/studyfile"
)

// TestImportTripletsVotesAndAnswers imports a triplet CSV with repeated
// comparisons, contradictions and several participants, and checks the
// study's vote table and answers against counts taken from the file itself:
// for every anchor a and pair j < k, j_closer = #(a, j, k) and
// k_closer = #(a, k, j) (the table's definition in migration 000001), and
// every row of the file is one answer (anchor, closer, farther) of the
// participant the row names. Item ids are numbers, so item i is index i.
func TestImportTripletsVotesAndAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)

	const n = 7
	rng := rand.New(rand.NewPCG(5, 6))
	type key struct{ a, j, k int }
	type answer struct {
		participant string
		a, c, f     int
	}
	want := map[key][2]int{}
	var answers []answer
	var csvText bytes.Buffer
	csvText.WriteString("participant,anchor,closer,farther\n")
	for range 400 {
		a := rng.IntN(n)
		c, f := rng.IntN(n), rng.IntN(n)
		if c == a || f == a || c == f {
			continue
		}
		// Few distinct comparisons, so many repeat and many contradict.
		if a > 3 {
			a, c, f = 1, 2, 3
			if rng.IntN(3) == 0 {
				c, f = f, c
			}
		}
		p := fmt.Sprintf("w%d", rng.IntN(5))
		fmt.Fprintf(&csvText, "%s,%d,%d,%d\n", p, a, c, f)
		answers = append(answers, answer{p, a, c, f})
		kk := key{a, min(c, f), max(c, f)}
		v := want[kk]
		if c < f {
			v[0]++
		} else {
			v[1]++
		}
		want[kk] = v
	}
	contradictions := 0
	for _, v := range want {
		if v[0] > 0 && v[1] > 0 {
			contradictions++
		}
	}
	if contradictions < 2 {
		t.Fatalf("the test data holds %d contradictions; it needs several", contradictions)
	}

	st, rep, err := studyfile.ImportTriplets(ctx, s, studyfile.TripletsInput{Slug: "votes", Title: "Votes", CSV: bytes.NewReader(csvText.Bytes())})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Answers != len(answers) || rep.Items != n {
		t.Fatalf("report %+v, want %d answers on %d items", rep, len(answers), n)
	}

	got := map[key][2]int{}
	rows, err := pool.Query(ctx, `SELECT anchor, j, k, j_closer, k_closer FROM votes WHERE study_id = $1`, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var kk key
		var v [2]int
		if err := rows.Scan(&kk.a, &kk.j, &kk.k, &v[0], &v[1]); err != nil {
			t.Fatal(err)
		}
		got[kk] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, kk := range slices.SortedFunc(maps.Keys(want), func(x, y key) int { return (x.a-y.a)*10000 + (x.j-y.j)*100 + (x.k - y.k) }) {
		if got[kk] != want[kk] {
			t.Errorf("votes (%d; %d, %d) = %v, want %v", kk.a, kk.j, kk.k, got[kk], want[kk])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d vote rows, want %d", len(got), len(want))
	}

	// The answers: the same multiset of (participant, anchor, closer, farther).
	var stored []answer
	rows, err = pool.Query(ctx, `
		SELECT p.external_id, a.anchor, a.closer, a.farther
		FROM answers a JOIN participants p ON p.id = a.participant_id WHERE a.study_id = $1`, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var x answer
		if err := rows.Scan(&x.participant, &x.a, &x.c, &x.f); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, x)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	order := func(x, y answer) int {
		if x.participant != y.participant {
			if x.participant < y.participant {
				return -1
			}
			return 1
		}
		return (x.a-y.a)*10000 + (x.c-y.c)*100 + (x.f - y.f)
	}
	slices.SortFunc(answers, order)
	slices.SortFunc(stored, order)
	if !slices.Equal(stored, answers) {
		t.Errorf("stored answers differ from the file's rows (%d stored, %d rows)", len(stored), len(answers))
	}
}
