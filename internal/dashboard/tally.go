// Package dashboard computes a study's dashboard figures from the counts the
// store reads (study.DashboardCounts, study.DashboardDelta): the
// additive tally of the answers, brought up to date past a watermark, and
// what the page shows of it (answers over time, the response-time median
// and histogram, the most contradicted comparisons, one page of the
// participants), and the cache of the studies' tallies (TallyCache). It
// holds no SQL and no HTTP: internal/collect reads the rows, internal/web
// builds the page.
package dashboard

import (
	"cmp"
	"slices"
	"time"

	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// Tally is the additive part of a study's dashboard figures over its
// answers with answers.seq <= Seq (the watermark; migration 000004): the
// answer count and time span, answers per second of answered_at, per
// response-time bin and per participant, and the vote figures (distinct
// comparisons, contradicted ones and the most contradicted). Advance brings
// it up to date with the answers after the watermark (and the votes of the
// comparisons they touched), so a study receiving answers does not rescan
// its answers on every page load. A Tally is not safe for concurrent use.
type Tally struct {
	Seq     int64 // the largest answers.seq counted (0: none)
	Answers int   // answers counted (all with seq <= Seq when they were read)
	// First and Last are the earliest and latest answered_at (nil: none).
	First, Last *time.Time
	// Participants and Completed are re-read on every advance (not additive).
	Participants, Completed     int
	Comparisons, Contradictions int

	seconds map[int64]int     // answers per Unix second of answered_at
	rt      map[int64]int     // answers per study.ResponseBinMS bin
	people  map[int64]int     // answers per participant id
	top     []study.VoteCount // the most contradicted comparisons, first first
	topN    int
}

// NewTally is the tally of counts read from scratch, keeping the top most
// contradicted comparisons (counts must hold at least those). It takes
// over the counts' maps.
func NewTally(c study.DashboardCounts, top int) *Tally {
	t := &Tally{Seq: c.Seq, Answers: c.Answers, First: c.First, Last: c.Last,
		Participants: c.Participants, Completed: c.Completed, Comparisons: c.Comparisons, Contradictions: c.Contradictions,
		seconds: c.Seconds, rt: c.ResponseBins, people: c.People, top: slices.Clone(c.Contradicted), topN: top}
	for _, m := range []*map[int64]int{&t.seconds, &t.rt, &t.people} {
		if *m == nil {
			*m = map[int64]int{}
		}
	}
	slices.SortFunc(t.top, compareContradicted)
	t.top = t.top[:min(len(t.top), top)]
	return t
}

// Advance adds d, read after t's watermark, to t. It returns false, leaving
// t unchanged, when the answers up to the watermark are no longer the ones
// counted (d.Counted differs: an answer committed late with a sequence
// number below the watermark, or answers removed); the caller then counts
// from scratch.
func (t *Tally) Advance(d study.DashboardDelta) bool {
	if d.Counted != t.Answers {
		return false
	}
	t.Participants, t.Completed = d.Participants, d.Completed
	touched := make(map[triplet.Key]study.VoteCount, len(d.Votes))
	for _, v := range d.Votes {
		touched[triplet.Key{Anchor: v.Anchor, J: v.J, K: v.K}] = v
	}
	added := map[triplet.Key]triplet.Counts{} // the delta's own votes per comparison
	for _, a := range d.Answers {
		t.Seq = max(t.Seq, a.Seq)
		t.Answers++
		at := a.At
		if t.First == nil || at.Before(*t.First) {
			t.First = &at
		}
		if t.Last == nil || at.After(*t.Last) {
			t.Last = &at
		}
		t.seconds[unixFloor(at)]++
		if a.ResponseBin != nil {
			t.rt[*a.ResponseBin]++
		}
		t.people[a.Participant]++
		k := triplet.KeyOf(triplet.Triplet{Anchor: a.Anchor, Closer: a.Closer, Farther: a.Farther})
		c := added[k]
		if a.Closer == k.J {
			c.JCloser++
		} else {
			c.KCloser++
		}
		added[k] = c
	}
	// Votes only grow, so a comparison's rank among the contradicted only
	// rises: the new top comes from the old top and the touched comparisons.
	cands := map[triplet.Key]study.VoteCount{}
	for _, v := range t.top {
		cands[triplet.Key{Anchor: v.Anchor, J: v.J, K: v.K}] = v
	}
	for k, a := range added {
		now, ok := touched[k]
		if !ok {
			continue // cannot happen with votes written with their answer
		}
		oldJ, oldK := now.JCloser-a.JCloser, now.KCloser-a.KCloser
		if oldJ+oldK == 0 {
			t.Comparisons++
		}
		contra := now.JCloser > 0 && now.KCloser > 0
		if contra && !(oldJ > 0 && oldK > 0) {
			t.Contradictions++
		}
		if contra {
			cands[k] = now
		}
	}
	t.top = t.top[:0]
	for _, v := range cands {
		t.top = append(t.top, v)
	}
	slices.SortFunc(t.top, compareContradicted)
	t.top = t.top[:min(len(t.top), t.topN)]
	return true
}

// compareContradicted orders comparisons as the store's votes query does:
// most votes on the weaker side first, then most votes, then by key.
func compareContradicted(a, b study.VoteCount) int {
	return cmp.Or(
		cmp.Compare(min(b.JCloser, b.KCloser), min(a.JCloser, a.KCloser)),
		cmp.Compare(b.JCloser+b.KCloser, a.JCloser+a.KCloser),
		cmp.Compare(a.Anchor, b.Anchor), cmp.Compare(a.J, b.J), cmp.Compare(a.K, b.K))
}

// unixFloor is the Unix second of x, as floor(date_part('epoch', x)).
func unixFloor(x time.Time) int64 {
	return x.Unix() // seconds rounded down, also before 1970
}

// ParticipantCount is a participant's id and number of answers.
type ParticipantCount struct {
	ID      int64
	Answers int
}

// ParticipantsByAnswers returns the participants who answered anything,
// most answers first (then by id): the tally's answers (triplets) plus
// trials, the participants' answers kept apart from them (catch and
// repeat trials, "can't decide": store.Store.TrialAnswerCounts), so that
// someone who answered only trials is listed too.
func (t *Tally) ParticipantsByAnswers(trials map[int64]int) []ParticipantCount {
	n := make(map[int64]int, len(t.people)+len(trials))
	for id, c := range t.people {
		n[id] += c
	}
	for id, c := range trials {
		n[id] += c
	}
	all := make([]ParticipantCount, 0, len(n))
	for id, c := range n {
		if c > 0 {
			all = append(all, ParticipantCount{id, c})
		}
	}
	slices.SortFunc(all, func(a, b ParticipantCount) int {
		return cmp.Or(cmp.Compare(b.Answers, a.Answers), cmp.Compare(a.ID, b.ID))
	})
	return all
}

// InPageOrder returns rows (store.Store.DashboardParticipants, in any
// order) in the order of page (a part of ParticipantsByAnswers); the rows
// keep their own answer counts (every answered question, as on the study
// page, where page counts the tally's answers and the trials read with
// them, which may have moved on since). Participants without a row are
// left out.
func InPageOrder(page []ParticipantCount, rows []study.DashboardParticipant) []study.DashboardParticipant {
	byID := make(map[int64]study.DashboardParticipant, len(rows))
	for _, r := range rows {
		byID[r.ID] = r
	}
	out := make([]study.DashboardParticipant, 0, len(page))
	for _, c := range page {
		if r, ok := byID[c.ID]; ok {
			out = append(out, r)
		}
	}
	return out
}
