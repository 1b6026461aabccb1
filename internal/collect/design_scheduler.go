package collect

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/active"
	"github.com/closer-lab/closer/internal/cache"
	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/secret"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// Defaults of a DesignScheduler.
const (
	DefaultLeaseTTL      = 2 * time.Minute
	DefaultSnapshotEvery = 500
	// DefaultPoolWindow is how many of a landmark design's open
	// comparisons (its most wanted) stand in design_pool at a time.
	DefaultPoolWindow = 4096
)

// DesignScheduler drives a stateful question design (internal/landmark,
// internal/basis) from the store, without making a study's questions and
// answers wait for one another (migration 000009):
//
//   - A question takes a free slot of an open comparison from the study's
//     design_pool: one statement claims the first row in the pool's order
//     (the design's; least answered and leased first for the landmark
//     designs) whose taken < wanted and whose comparison the participant
//     was never asked, skipping rows other questions hold locked, and
//     inserts the question and its lease (design_leases) for LeaseTTL.
//     With no free slot it takes over an expired lease, and with none of
//     those either the store serves a random question recorded as
//     DesignFallback.
//   - An answer to a design question is stored with a row in design_inbox
//     and committed; then the answer's request waits for the study's
//     writer to record it.
//   - The writer, one per study at a time across processes (it alone
//     locks the study's design_states row), records the inbox in order in
//     the design, appends the answers it accepted to design_events (every
//     SnapshotEvery of them it saves a snapshot), releases their leases and
//     writes the pool rows the new state changed, in one transaction that
//     commits without waiting for its WAL flush: it holds the lock only
//     for the work itself. If that transaction is lost in a crash, so is
//     all of it, and the inbox rows it deleted are recorded again; a
//     later question that saw its pool rows committed after it, so with it.
//
// The design's state lives in PostgreSQL (design_states, design_events);
// each process caches it and checks its (version, rev) under the lock.
//
// Everything above is per arm: a study with arms (arms.go) has a state,
// events, a pool, leases, an inbox and a writer per stateful arm, keyed by
// (study, arm); a study without arms has arm 0 alone.
type DesignScheduler struct {
	// LeaseTTL is how long a comparison stays handed to a question; after
	// it another question may take the lease over (the first question
	// stays open and its late answer still counts if the design still
	// wants it).
	LeaseTTL time.Duration
	// SnapshotEvery is how many recorded answers pass between snapshots;
	// a process without the state in memory replays at most that many.
	SnapshotEvery int
	// PoolWindow bounds the open comparisons kept in design_pool, the
	// design's most wanted first (0: all; the basis design keeps all).
	PoolWindow int
	// FullFor is how long the process takes the study's design for full
	// after a question found no free slot in it (DefaultFullFor; 0: never).
	FullFor time.Duration
	// OnError is told when the writer fails (its answers stay in the inbox
	// and the next writer records them); nil ignores it.
	OnError func(studyID int64, err error)

	name     string
	kind     designKind
	db       *pgxpool.Pool
	mu       sync.Mutex           // guards the maps from started to writers and the capLevels in levels
	started  map[armKey]bool      // arms whose design state is known to exist
	bands    map[armKey]int32     // the band each arm's last likely claim took a slot in
	levels   map[armKey]*capLevel // a spreading arm's cap on the leases of one comparison (capLevel)
	full     map[armKey]time.Time // when a question last found no slot of the arm free (seemsFull)
	warming  map[armKey]bool      // active arms whose last fallback was a warm-up question (warmingUp)
	analyzed map[armKey]bool      // arms whose first writer pass saw to the pool's statistics (analyzeOnce)
	writers  map[armKey]*writer
	stats    struct{ hits, replays, restores, steps, failures atomic.Int64 }
	// cache is the arms' design states as this process last saw them
	// (design_state.go), the least recently written out first past
	// maxCachedArms; it has its own lock.
	cache *cache.LRU[armKey, *cachedState]
	// background runs the writers (the store's, set by registerDesign):
	// Store.Close stops them.
	background *background
}

// armKey names one arm of one study: the design state it keeps.
type armKey struct {
	study int64
	arm   int
}

// keyOf is the arm of study st that a question of its participant serves.
func keyOf(st studyState) armKey { return armKey{st.ID, st.Arm} }

// NewDesignScheduler returns the scheduler of one of the stateful designs
// (DesignLandmarkK1, DesignLandmarkK2, DesignBasis, DesignActive).
func NewDesignScheduler(name string) (*DesignScheduler, error) {
	ds := &DesignScheduler{LeaseTTL: DefaultLeaseTTL, SnapshotEvery: DefaultSnapshotEvery, FullFor: DefaultFullFor, name: name,
		cache: cache.New[armKey, *cachedState](maxCachedArms), started: map[armKey]bool{}, bands: map[armKey]int32{}, writers: map[armKey]*writer{},
		levels: map[armKey]*capLevel{}, full: map[armKey]time.Time{}, warming: map[armKey]bool{}, analyzed: map[armKey]bool{},
		background: newBackground()}
	switch name {
	case study.DesignLandmarkK1, study.DesignLandmarkK2:
		ds.kind, ds.PoolWindow = landmarkKind, DefaultPoolWindow
	case study.DesignBasis:
		ds.kind = basisKind
	case study.DesignActive:
		ds.kind = activeKind
	default:
		return nil, fmt.Errorf("unknown stateful design %q", name)
	}
	return ds, nil
}

// RegisterDesigns registers the landmark-k1, landmark-k2, basis and active
// designs on s and returns their schedulers by name.
func RegisterDesigns(s *Store) map[string]*DesignScheduler {
	out := map[string]*DesignScheduler{}
	for _, name := range []string{study.DesignLandmarkK1, study.DesignLandmarkK2, study.DesignBasis, study.DesignActive} {
		ds, err := NewDesignScheduler(name)
		if err != nil {
			panic(err) // the names above are known
		}
		s.registerDesign(ds)
		out[name] = ds
	}
	return out
}

// CacheStats counts how the scheduler's writers found the states they
// needed (current in memory, brought up to date by replaying events, or
// restored from the snapshot), the writer's transactions and its failures.
type CacheStats struct{ Hits, Replays, Restores, Steps, Failures int64 }

// CacheStats returns the scheduler's counters.
func (ds *DesignScheduler) CacheStats() CacheStats {
	return CacheStats{Hits: ds.stats.hits.Load(), Replays: ds.stats.replays.Load(), Restores: ds.stats.restores.Load(),
		Steps: ds.stats.steps.Load(), Failures: ds.stats.failures.Load()}
}

// A spreading design's pool (the landmark designs) is ordered by band, the
// answers each comparison still wants (band = −wanted: most first), and
// within a band by prio = ord · 1540483477 mod 2³¹, a bijection of [0,
// 2³¹) (the multiplier is odd) that scatters the design's order. Only the
// writer changes band and prio; a question's claim changes taken alone,
// an update PostgreSQL makes in place (HOT: the row's index entries stay,
// design_pool's fillfactor leaves the room), so the claims do not fill the
// pool's index with dead entries that later claims would have to step
// over. A claim starts at a place of its own in the band (claimStart) and
// takes the first row with no lease out: the comparisons on lease are
// scattered through the band instead of piling up where every claim
// begins, so a claim steps over few of them. Basis keeps its own order in
// one band (band 0, prio = ord), and so does the active design (ord: the
// question's place in the pool, which is in score order).

// spreadCap is how many questions of one comparison a spreading design has
// out on lease at once while others are free: one, so that every
// comparison has its next answer asked before any has two more. It is the
// lowest level of the arm's cap (capLevel), which rises while the crowd
// holds more questions than the band has comparisons.
const spreadCap = 1

// levelEvery is how often a process's writer measures a spreading arm's
// pool to set its level (capLevel).
const levelEvery = 200 * time.Millisecond

// capLevel is the cap a spreading arm's claims put on the leases one
// comparison may have out (taken < least(wanted, cap)). It is spreadCap
// while the participants hold fewer questions than the pool has
// comparisons, and more once they hold more: 1,500 participants with a
// question open and one ahead hold about 3,000 leases, more than the 2,508
// comparisons of a landmark-k1 study of 40 items and 12 landmarks. Under a
// cap every comparison has reached, a claim finds nothing only after
// reading the whole band; with a fixed cap of one every question then read
// the pool three times (the likely claim and two of the slow path's) inside
// its participant's transaction before claimAnySQL took the first
// comparison in the design's order, however many leases that one had out,
// so that leases piled onto a few comparisons (up to 56 on one, 1 on most)
// and the questions held database connections long enough for the server
// to shed half its capacity.
//
// The arm's writer sets the level, at most every levelEvery, from the
// leases out and the comparisons still wanted (levelFor): high enough that
// a fifth of the slots under it are free, so that a claim finds one after
// a few rows, and no higher, so that no comparison has more than one lease
// more than the crowd needs. Between two measurements the slow path's last
// claim (claimAnySQL) raises it when it had to go above it.
type capLevel struct {
	level    int
	measured time.Time // when the writer last measured the pool
}

// levelFor is the level for leases out on a pool of rows comparisons still
// wanted: ⌈1.25 · leases / rows⌉, at least spreadCap.
func levelFor(rows, leases int64) int {
	if rows <= 0 {
		return spreadCap
	}
	return max(spreadCap, int((5*leases+4*rows-1)/(4*rows)))
}

// levelOf returns the arm's level (noCap for basis, which keeps no cap).
func (ds *DesignScheduler) levelOf(key armKey) int {
	if !ds.kind.spread {
		return noCap
	}
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if l := ds.levels[key]; l != nil {
		return l.level
	}
	return spreadCap
}

// raiseLevel raises the arm's level to the leases out, with the one just
// taken, on the comparison that the slow path's last claim took
// (claimAnySQL), when they are more.
func (ds *DesignScheduler) raiseLevel(key armKey, level int) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	l := ds.levels[key]
	if l == nil {
		l = &capLevel{level: spreadCap}
		ds.levels[key] = l
	}
	l.level = max(l.level, level)
}

// poolLoadSQL counts the comparisons of arm $2 of study $1 still wanted
// and the leases out on the pool.
const poolLoadSQL = `SELECT count(*) FILTER (WHERE wanted > 0), coalesce(sum(taken), 0) FROM design_pool WHERE study_id = $1 AND arm = $2`

// measureLevel sets a spreading arm's level from its pool (levelFor), at
// most every levelEvery; the writer calls it after its passes. Best
// effort: the level stays as it was when the query fails.
func (ds *DesignScheduler) measureLevel(ctx context.Context, key armKey) {
	if !ds.kind.spread {
		return
	}
	ds.mu.Lock()
	l := ds.levels[key]
	if l == nil {
		l = &capLevel{level: spreadCap}
		ds.levels[key] = l
	}
	due := time.Since(l.measured) >= levelEvery
	if due {
		l.measured = time.Now()
	}
	ds.mu.Unlock()
	if !due {
		return
	}
	var rows, leases int64
	if err := ds.db.QueryRow(ctx, poolLoadSQL, key.study, key.arm).Scan(&rows, &leases); err != nil {
		return
	}
	ds.mu.Lock()
	l.level = levelFor(rows, leases)
	ds.mu.Unlock()
}

// Level returns the cap on the leases one comparison may have out that
// the process's claims use for the arm of the study (1 until the crowd
// holds more questions than the design has comparisons; see capLevel).
func (ds *DesignScheduler) Level(studyID int64, arm int) int {
	return ds.levelOf(armKey{studyID, arm})
}

// claimStart is where in its band a spreading design's claim for a
// participant who answered `answered` questions starts (0 for basis: the
// design's order). A function of both, so a replayed crowd claims the same
// rows.
func (ds *DesignScheduler) claimStart(participantID int64, answered int) int64 {
	if !ds.kind.spread {
		return 0
	}
	x := uint64(participantID)*0x9e3779b97f4a7c15 + uint64(answered)
	x ^= x >> 31
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 29
	return int64(x % (1 << 31))
}

// noCap is a cap no comparison reaches (taken < wanted decides).
const noCap = 1 << 30

// claimWith returns a claim statement: it takes a free slot for
// participant $2 of arm $7 of study $1, the first row of design_pool x
// that the first of picks that finds one finds, and issues question $4 on
// it (left and right swapped when $5, recorded as design $6) with a lease
// of $3 seconds. A pick is the first row in its order that meets its
// condition and whose comparison the participant was never asked (rows
// other claims hold are skipped); a later pick runs only when the ones
// before it found nothing. It returns the question and the row's column
// ret (band, or taken after the claim); no row: no slot.
//
// OFFSET 0 keeps the "never asked" test a subplan, one probe of
// questions_comparison_once per row the pick looks at (usually one):
// PostgreSQL otherwise made it an anti join that read every question of
// the participant first (up to their 50, 34–42 buffers against 11, 0.45
// against 0.16 ms a claim, measured on a crowd's pool).
func claimWith(ret string, picks ...pick) string { return claimStatement(false, ret, picks...) }

// trialClaimWith is claimWith for a study of another format than the
// triplet (issue 27): it takes only rows that hold their trial's items
// (design_pool.options) and issues the question on them in a fresh random
// order (so that two participants given one trial see it differently
// arranged, as random trials are); it returns the items shown after the
// row's column ret.
func trialClaimWith(ret string, picks ...pick) string { return claimStatement(true, ret, picks...) }

// shuffledOptions is the expression of a trial's items, from the claimed
// row c, in a random order.
const shuffledOptions = `(SELECT array_agg(o ORDER BY random()) FROM unnest(c.options) o)`

// claimStatement is claimWith (trial false) or trialClaimWith.
func claimStatement(trial bool, ret string, picks ...pick) string {
	var with, union strings.Builder
	for i, p := range picks {
		if trial {
			p.cond += ` AND x.options IS NOT NULL`
		}
		fmt.Fprintf(&with, `
		s%d AS (
			SELECT x.anchor, x.j, x.k FROM design_pool x
			WHERE x.study_id = $1 AND x.arm = $7 AND %s
				AND NOT EXISTS (SELECT 1 FROM questions q WHERE q.participant_id = $2 AND q.anchor = x.anchor
					AND least(q.left_idx, q.right_idx) = x.j AND greatest(q.left_idx, q.right_idx) = x.k
					AND q.design NOT IN ('import', 'repeat') OFFSET 0)
			ORDER BY %s LIMIT 1 FOR UPDATE SKIP LOCKED),`, i, p.cond, p.order)
		if i > 0 {
			union.WriteString(" UNION ALL ")
		}
		fmt.Fprintf(&union, "SELECT * FROM s%d", i)
	}
	if trial {
		return `
		WITH` + with.String() + `
		slot AS (` + union.String() + ` LIMIT 1),
		c AS (
			UPDATE design_pool p SET taken = p.taken + 1
			FROM slot WHERE p.study_id = $1 AND p.arm = $7 AND p.anchor = slot.anchor AND p.j = slot.j AND p.k = slot.k
			RETURNING p.anchor, p.j, p.k, p.band, p.taken, p.options),
		l AS (
			INSERT INTO design_leases (participant_id, anchor, j, k, study_id, arm, expires_at)
			SELECT $2, anchor, j, k, $1, $7, now() + make_interval(secs => $3) FROM c),
		q AS (
			INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design, options)
			SELECT $4, $1, $2, anchor, CASE WHEN $5 THEN k ELSE j END, CASE WHEN $5 THEN j ELSE k END, $6, ` + shuffledOptions + ` FROM c
			RETURNING anchor, left_idx, right_idx, issued_at, options)
		SELECT q.anchor, q.left_idx, q.right_idx, q.issued_at, c.` + ret + `, q.options FROM q, c`
	}
	return `
		WITH` + with.String() + `
		slot AS (` + union.String() + ` LIMIT 1),
		c AS (
			UPDATE design_pool p SET taken = p.taken + 1
			FROM slot WHERE p.study_id = $1 AND p.arm = $7 AND p.anchor = slot.anchor AND p.j = slot.j AND p.k = slot.k
			RETURNING p.anchor, p.j, p.k, p.band, p.taken),
		l AS (
			INSERT INTO design_leases (participant_id, anchor, j, k, study_id, arm, expires_at)
			SELECT $2, anchor, j, k, $1, $7, now() + make_interval(secs => $3) FROM c),
		q AS (
			INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design)
			SELECT $4, $1, $2, anchor, CASE WHEN $5 THEN k ELSE j END, CASE WHEN $5 THEN j ELSE k END, $6 FROM c
			RETURNING anchor, left_idx, right_idx, issued_at)
		SELECT q.anchor, q.left_idx, q.right_idx, q.issued_at, c.` + ret + ` FROM q, c`
}

// pick is one way a claim looks for a free slot: a condition on the pool's
// row x and the order to take the first row in.
type pick struct{ cond, order string }

// firstBand is the condition of the first band with a comparison that has
// fewer than $8 leases out.
const firstBand = `x.band = (SELECT min(band) FROM design_pool WHERE study_id = $1 AND arm = $7 AND taken < least(wanted, $8::int))`

// The SQL of the design's questions, by name so that TestHotQueryPlans
// explains these very strings on a large study. (Built once, from
// claimWith; never changed.)
var (
	// claimBandSQL claims in band $9, from prio $10 on and then from the
	// band's beginning, a comparison with fewer than $8 leases out: the
	// band a process last took a slot in. (Without the second pick a claim
	// whose start fell behind the band's last free slot found none, and its
	// question took the slow path.)
	claimBandSQL = claimWith(`band`,
		pick{`x.band = $9 AND x.prio >= $10 AND x.taken < least(x.wanted, $8::int)`, `x.prio`},
		pick{`x.band = $9 AND x.prio < $10 AND x.taken < least(x.wanted, $8::int)`, `x.prio`})
	// claimFirstSQL claims in the first band with a comparison that has
	// fewer than $8 leases out, from prio $9 on and then from the band's
	// beginning.
	claimFirstSQL = claimWith(`band`,
		pick{firstBand + ` AND x.prio >= $9 AND x.taken < least(x.wanted, $8::int)`, `x.prio`},
		pick{firstBand + ` AND x.prio < $9 AND x.taken < least(x.wanted, $8::int)`, `x.prio`})
	// trialClaimBandSQL and trialClaimFirstSQL are claimBandSQL and
	// claimFirstSQL for an active odd-one-out or rank study
	// (trialClaimWith; the designs that spread, landmark's, ask triplets
	// only, so claimAnySQL has none).
	trialClaimBandSQL = trialClaimWith(`band`,
		pick{`x.band = $9 AND x.prio >= $10 AND x.taken < least(x.wanted, $8::int)`, `x.prio`},
		pick{`x.band = $9 AND x.prio < $10 AND x.taken < least(x.wanted, $8::int)`, `x.prio`})
	trialClaimFirstSQL = trialClaimWith(`band`,
		pick{firstBand + ` AND x.prio >= $9 AND x.taken < least(x.wanted, $8::int)`, `x.prio`},
		pick{firstBand + ` AND x.prio < $9 AND x.taken < least(x.wanted, $8::int)`, `x.prio`})
	// claimAnySQL claims in any band, in order, a comparison with fewer
	// than $8 leases out (the arm's level), else one with fewer than $8 +
	// 1, else one with fewer leases out than answers wanted: for a
	// participant who was asked every comparison of the first band with a
	// free slot under the level, for a first band whose free slots other
	// claims hold locked, or when every comparison holds as many leases as
	// the level allows (capLevel). It returns the comparison's leases out
	// with this one, which raises the arm's level when it is above it.
	// (Before capLevel it took the first comparison in order with fewer
	// than wanted, however many leases that had out, and every claim after
	// the first crowd-sized wave of leases came here.)
	claimAnySQL = claimWith(`taken`,
		pick{`x.taken < least(x.wanted, $8::int)`, `x.band, x.prio`},
		pick{`x.taken < least(x.wanted, $8::int + 1)`, `x.band, x.prio`},
		pick{`x.taken < x.wanted`, `x.band, x.prio`})
)

const (
	// takeOverSQL hands participant $2 the oldest expired lease of arm $7
	// of study $1 on a comparison the design still wants and they were
	// never asked, and issues question $4 on it as the claims do.
	takeOverSQL = `
		WITH slot AS (
			SELECT x.participant_id, x.anchor, x.j, x.k FROM design_leases x
			WHERE x.study_id = $1 AND x.arm = $7 AND x.expires_at <= now()
				AND NOT EXISTS (SELECT 1 FROM questions q WHERE q.participant_id = $2 AND q.anchor = x.anchor
					AND least(q.left_idx, q.right_idx) = x.j AND greatest(q.left_idx, q.right_idx) = x.k
					AND q.design NOT IN ('import', 'repeat'))
				AND (SELECT p.wanted FROM design_pool p WHERE p.study_id = $1 AND p.arm = $7 AND p.anchor = x.anchor
					AND p.j = x.j AND p.k = x.k) > 0
			ORDER BY x.expires_at LIMIT 1 FOR UPDATE OF x SKIP LOCKED),
		c AS (
			UPDATE design_leases d SET participant_id = $2, leased_at = now(), expires_at = now() + make_interval(secs => $3)
			FROM slot WHERE d.participant_id = slot.participant_id AND d.anchor = slot.anchor AND d.j = slot.j AND d.k = slot.k
			RETURNING d.anchor, d.j, d.k)
		INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design)
		SELECT $4, $1, $2, anchor, CASE WHEN $5 THEN k ELSE j END, CASE WHEN $5 THEN j ELSE k END, $6 FROM c
		RETURNING anchor, left_idx, right_idx, issued_at, 0`
	// trialTakeOverSQL is takeOverSQL for an active odd-one-out or rank
	// study: the trial's items come from its pool row, shown in a fresh
	// random order (trialClaimWith).
	trialTakeOverSQL = `
		WITH slot AS (
			SELECT x.participant_id, x.anchor, x.j, x.k, p.options FROM design_leases x
			JOIN design_pool p ON p.study_id = $1 AND p.arm = $7 AND p.anchor = x.anchor AND p.j = x.j AND p.k = x.k
			WHERE x.study_id = $1 AND x.arm = $7 AND x.expires_at <= now() AND p.wanted > 0 AND p.options IS NOT NULL
				AND NOT EXISTS (SELECT 1 FROM questions q WHERE q.participant_id = $2 AND q.anchor = x.anchor
					AND least(q.left_idx, q.right_idx) = x.j AND greatest(q.left_idx, q.right_idx) = x.k
					AND q.design NOT IN ('import', 'repeat'))
			ORDER BY x.expires_at LIMIT 1 FOR UPDATE OF x SKIP LOCKED),
		c AS (
			UPDATE design_leases d SET participant_id = $2, leased_at = now(), expires_at = now() + make_interval(secs => $3)
			FROM slot WHERE d.participant_id = slot.participant_id AND d.anchor = slot.anchor AND d.j = slot.j AND d.k = slot.k
			RETURNING d.anchor, d.j, d.k, slot.options)
		INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design, options)
		SELECT $4, $1, $2, anchor, CASE WHEN $5 THEN k ELSE j END, CASE WHEN $5 THEN j ELSE k END, $6, ` + shuffledOptions + ` FROM c
		RETURNING anchor, left_idx, right_idx, issued_at, 0, options`
	stateExistsSQL = `SELECT EXISTS (SELECT 1 FROM design_states WHERE study_id = $1 AND arm = $2)`
	// insertWarmupSQL issues question $1 to participant $3 of study $2 on
	// a random comparison as a warm-up question of the active design of
	// arm $7 ('active': the design records its answer), if the design has
	// recorded fewer answers than its warm-up takes; nothing otherwise, or
	// when the participant had this comparison. $8: a trial's items shown
	// (NULL: a triplet).
	insertWarmupSQL = `
		INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design, options)
		SELECT $1, $2, $3, $4, $5, $6, 'active', $8::int[] FROM design_states d
		WHERE d.study_id = $2 AND d.arm = $7 AND d.version < (d.progress -> 'active' ->> 'warmup')::bigint
		ON CONFLICT DO NOTHING RETURNING issued_at`
	// insertActiveFallbackSQL issues question $1 to participant $3 of
	// study $2 on a random comparison when the active design of arm $7
	// offers none from its pool: recorded as a warm-up question of the
	// design ('active', whose answer the design records) while the design
	// has recorded fewer answers than its warm-up takes, else as
	// random-fallback. Nothing when the participant had this comparison.
	// $8: a trial's items shown (NULL: a triplet).
	insertActiveFallbackSQL = `
		INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design, options)
		VALUES ($1, $2, $3, $4, $5, $6, coalesce((SELECT 'active' FROM design_states d WHERE d.study_id = $2 AND d.arm = $7
			AND d.version < (d.progress -> 'active' ->> 'warmup')::bigint), 'random-fallback'), $8::int[])
		ON CONFLICT DO NOTHING RETURNING issued_at, design`
)

// claim is one claim statement to send: its SQL and arguments, and
// whether the band of the slot it takes is worth remembering (the first
// band's, where the next claims should look first).
type claim struct {
	sql      string
	args     []any
	bandHint bool
	// exact: the claim returns the leases out on its comparison in place
	// of the band (claimAnySQL), a level to raise the arm's to.
	exact bool
	// format, when not the triplet, is the study's format: the claim is a
	// trial's (trialClaimWith), which returns the items shown too.
	format study.StudyFormat
}

// forFormat makes cl the claim of a trial of format f (its statement the
// trial variant of cl's), when f is not the triplet.
func (cl claim) forFormat(f study.StudyFormat) claim {
	if f.Format == study.FormatTriplet || f.Format == "" {
		return cl
	}
	cl.format = f
	switch cl.sql {
	case claimBandSQL:
		cl.sql = trialClaimBandSQL
	case claimFirstSQL:
		cl.sql = trialClaimFirstSQL
	case takeOverSQL:
		cl.sql = trialTakeOverSQL
	}
	return cl
}

// likelyClaim is the claim a question tries first: in the band this
// process last took a slot in, when it knows one, else in the first band;
// from the participant's own start (claimStart), with the design's cap.
func (ds *DesignScheduler) likelyClaim(st studyState, participantID int64, answered int, id string) claim {
	key := keyOf(st)
	base := []any{st.ID, participantID, ds.leaseFor(st).Seconds(), id, rand.IntN(2) == 1, ds.name, st.Arm, ds.levelOf(key)}
	start := ds.claimStart(participantID, answered)
	ds.mu.Lock()
	band, known := ds.bands[key]
	ds.mu.Unlock()
	if known {
		return claim{sql: claimBandSQL, args: append(base, band, start), bandHint: true}.forFormat(st.Format)
	}
	return claim{sql: claimFirstSQL, args: append(base, start), bandHint: true}.forFormat(st.Format)
}

// leaseFor is how long a question of study st holds its comparison:
// LeaseTTL, or the study's idle time when that is shorter, so that a
// participant who went idle no longer keeps a comparison from others.
func (ds *DesignScheduler) leaseFor(st studyState) time.Duration {
	if idle := time.Duration(st.IdleMinutes) * time.Minute; idle > 0 && idle < ds.LeaseTTL {
		return idle
	}
	return ds.LeaseTTL
}

// read reads a claim's result, remembering the band it took a slot in.
func (ds *DesignScheduler) read(cl claim, key armKey, r pgx.Row) (study.Comparison, time.Time, bool, error) {
	c := study.Comparison{Design: ds.name}
	var issued time.Time
	var band int32 // or the level (cl.exact)
	var err error
	if cl.format.Format != "" {
		c.Format, c.Choose = cl.format.Format, cl.format.Choices()
		err = r.Scan(&c.Anchor, &c.Left, &c.Right, &issued, &band, &c.Options)
	} else {
		err = r.Scan(&c.Anchor, &c.Left, &c.Right, &issued, &band)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return study.Comparison{}, time.Time{}, false, nil
	}
	if err != nil {
		return study.Comparison{}, time.Time{}, false, err
	}
	if cl.bandHint {
		ds.mu.Lock()
		ds.bands[key] = band
		ds.mu.Unlock()
	}
	if cl.exact {
		ds.raiseLevel(key, int(band))
	}
	if ds.kind.warmup {
		ds.noteWarming(key, false) // a pool question: the warm-up is over
	}
	return c, issued, true, nil
}

// takeOver issues question id when the likely path found no free slot
// (claimed: it tried a claim; an active design warming up tries a warm-up
// question instead): first, on the arm's first design question, it creates
// the design's state and pool; then it claims in the first band from the
// participant's start and from the band's beginning, in any band (a
// spreading design), and last takes over an expired lease. It makes the
// participant hold the question it issued; ok = false: none.
func (ds *DesignScheduler) takeOver(ctx context.Context, tx pgx.Tx, st studyState, participantID int64, answered, n int, id string,
	slot holdSlot, claimed bool) (study.Comparison, time.Time, bool, error) {
	started, err := ds.start(ctx, tx, st, n)
	if err != nil {
		return study.Comparison{}, time.Time{}, false, err
	}
	key := keyOf(st)
	base := []any{st.ID, participantID, ds.leaseFor(st).Seconds(), id, rand.IntN(2) == 1, ds.name, st.Arm}
	var tries []claim
	if ds.kind.spread {
		// In the first band with a free slot under the arm's level (the
		// likely claim looked in the band this process last took one in);
		// else in any band (claimAnySQL), which may raise the level.
		tries = []claim{
			{sql: claimFirstSQL, args: append(append([]any{}, base...), ds.levelOf(key), ds.claimStart(participantID, answered)), bandHint: true},
			{sql: claimAnySQL, args: append(append([]any{}, base...), ds.levelOf(key)), exact: true},
		}
	} else if !started || !claimed {
		// Basis and active keep one band and claim from its beginning: the
		// likely claim was this one, unless the state was only just created
		// or the likely path was a warm-up question.
		tries = []claim{{sql: claimFirstSQL, args: append(append([]any{}, base...), noCap, int64(0)), bandHint: true}}
	}
	tries = append(tries, claim{sql: takeOverSQL, args: base})
	for i := range tries {
		tries[i] = tries[i].forFormat(st.Format)
	}
	for _, cl := range tries {
		if cl.sql == takeOverSQL || cl.sql == trialTakeOverSQL {
			// Every claim found the pool without a free slot.
			ds.markFull(key)
		}
		c, issued, ok, err := ds.read(cl, key, tx.QueryRow(ctx, cl.sql, cl.args...))
		if err != nil {
			return study.Comparison{}, time.Time{}, false, err
		}
		if !ok {
			continue
		}
		if _, err := tx.Exec(ctx, slot.sql(), participantID, id); err != nil {
			return study.Comparison{}, time.Time{}, false, err
		}
		return c, issued, true, nil
	}
	return study.Comparison{}, time.Time{}, false, nil
}

// analyzeOnce gives design_pool and design_leases statistics after the
// arm's first writer pass in this process, when they have none or fewer
// rows than the arm's pool holds (analyzeIfGrown's rule). A study's first
// minute is otherwise planned without them (autovacuum analyzes a table
// only after its naptime): PostgreSQL then estimated a row or two for an
// arm's pool and leases and chose plans that walk every row and its dead
// versions, so that a claim took 1.7 ms and a writer pass's release of
// leases 72 ms in a landmark study's first 20 s under load, and held
// leases out longer.
func (ds *DesignScheduler) analyzeOnce(ctx context.Context, key armKey, poolRows int) {
	ds.mu.Lock()
	done := ds.analyzed[key]
	ds.analyzed[key] = true
	ds.mu.Unlock()
	if done {
		return
	}
	// Best effort: the pool works without it, only slower.
	_ = analyzeIfGrown(ctx, ds.db, "design_pool", poolRows)
	_ = analyzeIfGrown(ctx, ds.db, "design_leases", poolRows)
}

// DefaultFullFor is how long a process takes a study's design for full
// after a question found no free slot in it: the questions in that time
// get their random fallback at once, in one statement, instead of after
// two claims and a takeover that would find nothing (a basis design waits
// on answers much of the time, a covered landmark design has nothing
// left). The process's own writer and skipped questions clear it when
// they free or open slots; slots that other processes open or that expire
// reach its questions after FullFor at the latest.
const DefaultFullFor = 100 * time.Millisecond

// markFull records that a question of the arm found no free slot.
func (ds *DesignScheduler) markFull(key armKey) {
	ds.mu.Lock()
	ds.full[key] = time.Now()
	ds.mu.Unlock()
}

// clearFull forgets that the arm's design seemed full: slots were freed
// or opened.
func (ds *DesignScheduler) clearFull(key armKey) {
	ds.mu.Lock()
	delete(ds.full, key)
	ds.mu.Unlock()
}

// seemsFull reports whether a question of the arm found no free slot
// within the last fullFor.
func (ds *DesignScheduler) seemsFull(key armKey) bool {
	ds.mu.Lock()
	at, ok := ds.full[key]
	ds.mu.Unlock()
	return ok && time.Since(at) < ds.FullFor
}

// warmingUp reports whether the arm's active design was warming up when
// this process last served it a fallback (its questions are then random
// questions the design records, issued at once without a claim of its
// empty pool). A fallback that finds the warm-up over, the writer that
// ends it and a new pool clear it.
func (ds *DesignScheduler) warmingUp(key armKey) bool {
	if !ds.kind.warmup {
		return false
	}
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return ds.warming[key]
}

// noteWarming records whether the arm's active design is warming up, as a
// fallback question's design said.
func (ds *DesignScheduler) noteWarming(key armKey, warming bool) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if warming {
		ds.warming[key] = true
	} else {
		delete(ds.warming, key)
	}
}

// start creates the study's design state and pool if it has none yet (its
// first design question); started reports that they existed before.
func (ds *DesignScheduler) start(ctx context.Context, tx pgx.Tx, st studyState, n int) (started bool, err error) {
	key := keyOf(st)
	ds.mu.Lock()
	started = ds.started[key]
	ds.mu.Unlock()
	if started {
		return true, nil
	}
	var exists bool
	if err := tx.QueryRow(ctx, stateExistsSQL, st.ID, st.Arm).Scan(&exists); err != nil {
		return false, err
	}
	if exists {
		// Known from committed data; a state this transaction creates is
		// known only once the next question sees it.
		ds.mu.Lock()
		ds.started[key] = true
		ds.mu.Unlock()
		return true, nil
	}
	return false, ds.ensureState(ctx, tx, st, n)
}

// writer coalesces this process's requests to record a study's inbox: an
// answer's request asks for a writer pass that starts after its commit and
// waits for it; passes run one at a time, each recording everything the
// inbox holds.
type writer struct {
	mu      sync.Mutex // guards running, asked, done and wake
	running bool
	asked   uint64 // passes asked for
	done    uint64 // passes asked for up to this one are done
	wake    chan struct{}
}

// recordPending records the arm's inbox in its design before it returns
// (or ctx ends): the answers its caller committed are in the design then,
// unless the writer failed (OnError is told; the answers stay in the inbox
// for the next pass).
func (ds *DesignScheduler) recordPending(ctx context.Context, key armKey) {
	ds.askPass(ctx, key, true)
}

// recordSoon asks for a writer pass that records the arm's inbox and
// returns at once.
func (ds *DesignScheduler) recordSoon(key armKey) {
	ds.askPass(context.Background(), key, false)
}

// askPass asks for a writer pass of the arm, starting its writer if none
// runs, and with wait waits for it (or for ctx to end). Once the store is
// closing no writer starts: the answers stay in the inbox for the next
// process, and askPass returns at once.
func (ds *DesignScheduler) askPass(ctx context.Context, key armKey, wait bool) {
	ds.mu.Lock()
	w, ok := ds.writers[key]
	if !ok {
		w = &writer{wake: make(chan struct{})}
		ds.writers[key] = w
	}
	ds.mu.Unlock()
	w.mu.Lock()
	w.asked++
	mine := w.asked
	if !w.running {
		if !ds.background.goRun(func(ctx context.Context) { ds.runWriter(ctx, key, w) }) {
			w.mu.Unlock()
			return
		}
		w.running = true
	}
	for wait && w.done < mine {
		wake := w.wake
		w.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return
		}
		w.mu.Lock()
	}
	w.mu.Unlock()
}

// gatherDelay is how long the writer of a design whose answers are
// recorded in the background (landmark, active) waits before a pass,
// gathering answers: nothing waits on its passes.
const gatherDelay = 20 * time.Millisecond

// inboxBatch bounds the answers one writer transaction records.
const inboxBatch = 1000

// runWriter runs writer passes while any is asked for, under the store's
// background context (ctx): not a request's, for a pass serves every
// waiting answer. Once the store is closing it begins no transaction, and
// tells every request still waiting that its pass is over (their answers
// stay in the inbox).
func (ds *DesignScheduler) runWriter(ctx context.Context, key armKey, w *writer) {
	for {
		w.mu.Lock()
		if w.done >= w.asked || ds.background.stopping() {
			w.running = false
			if w.done < w.asked {
				w.done = w.asked
				close(w.wake)
				w.wake = make(chan struct{})
			}
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		if ds.kind.async {
			select {
			case <-time.After(gatherDelay):
			case <-ds.background.stop:
				continue // the loop's head sees the store closing
			}
		}
		w.mu.Lock()
		target := w.asked
		w.mu.Unlock()
		passCtx, cancel := context.WithTimeout(ctx, time.Minute)
		for !ds.background.stopping() {
			n, err := ds.recordInbox(passCtx, key)
			if err != nil {
				ds.stats.failures.Add(1)
				if ds.OnError != nil {
					ds.OnError(key.study, err)
				}
				break
			}
			if n < inboxBatch {
				break
			}
		}
		cancel()
		w.mu.Lock()
		w.done = target
		close(w.wake)
		w.wake = make(chan struct{})
		w.mu.Unlock()
	}
}

// The SQL of the writer, by name so that TestHotQueryPlans explains these
// very strings on a large study.
const (
	asyncCommitSQL = `SET LOCAL synchronous_commit = off`
	readInboxSQL   = `
		SELECT id, participant_id, anchor, closer, farther FROM design_inbox
		WHERE study_id = $1 AND arm = $2 ORDER BY id LIMIT $3`
	deleteInboxSQL   = `DELETE FROM design_inbox WHERE id = ANY ($1)`
	releaseLeasesSQL = `
		DELETE FROM design_leases l USING unnest($2::bigint[], $3::int[], $4::int[], $5::int[]) AS u(p, a, j, k)
		WHERE l.study_id = $1 AND l.participant_id = u.p AND l.anchor = u.a AND l.j = u.j AND l.k = u.k
		RETURNING l.anchor, l.j, l.k`
	// poolReleaseSQL takes released leases off their rows' taken (arm $6).
	poolReleaseSQL = `
		UPDATE design_pool p SET taken = p.taken - u.n
		FROM unnest($2::int[], $3::int[], $4::int[], $5::int[]) AS u(a, j, k, n)
		WHERE p.study_id = $1 AND p.arm = $6 AND p.anchor = u.a AND p.j = u.j AND p.k = u.k`
	// poolWriteSQL sets the rows of arm $8 whose wanted or order the state
	// changed; a new row counts the leases its comparison has (none, but
	// for leases taken before migration 000009, or out on an active
	// design's earlier pool). $7: the design spreads (its band and prio as
	// the comment on claimStart says). The writer sends the rows the pool
	// holds already through poolUpdateSQL, which counts no leases: on a
	// fresh design_leases without statistics (analyzeOnce) this statement
	// looked each row's leases up through the expiry index, walking every
	// lease of the arm and their dead versions per row (296 ms a writer
	// pass of 480 rows under load, which held leases out longer and sent
	// claims down their slow paths).
	poolWriteSQL = `
		INSERT INTO design_pool AS p (study_id, arm, anchor, j, k, wanted, taken, ord, band, prio)
		SELECT $1, $8, u.a, u.j, u.k, u.wanted, l.n, u.ord,
			CASE WHEN $7 THEN -u.wanted ELSE 0 END, CASE WHEN $7 THEN u.ord * 1540483477 % 2147483648 ELSE u.ord END
		FROM unnest($2::int[], $3::int[], $4::int[], $5::int[], $6::bigint[]) AS u(a, j, k, wanted, ord),
			LATERAL (SELECT count(*)::int AS n FROM design_leases d
				WHERE d.study_id = $1 AND d.arm = $8 AND d.anchor = u.a AND d.j = u.j AND d.k = u.k) l
		ON CONFLICT (study_id, arm, anchor, j, k) DO UPDATE SET wanted = excluded.wanted, ord = excluded.ord,
			band = excluded.band, prio = excluded.prio`
	// poolUpdateSQL is poolWriteSQL for rows the pool holds: their taken
	// stays.
	poolUpdateSQL = `
		UPDATE design_pool p SET wanted = u.wanted, ord = u.ord,
			band = CASE WHEN $7 THEN -u.wanted ELSE 0 END, prio = CASE WHEN $7 THEN u.ord * 1540483477 % 2147483648 ELSE u.ord END
		FROM unnest($2::int[], $3::int[], $4::int[], $5::int[], $6::bigint[]) AS u(a, j, k, wanted, ord)
		WHERE p.study_id = $1 AND p.arm = $8 AND p.anchor = u.a AND p.j = u.j AND p.k = u.k`
	// poolDropSQL deletes the rows of arm $5 of the given comparisons that
	// are no longer wanted and have no lease out.
	poolDropSQL = `
		DELETE FROM design_pool p USING unnest($2::int[], $3::int[], $4::int[]) AS u(a, j, k)
		WHERE p.study_id = $1 AND p.arm = $5 AND p.anchor = u.a AND p.j = u.j AND p.k = u.k AND p.wanted = 0 AND p.taken = 0
		RETURNING p.anchor, p.j, p.k`
	insertEventsSQL = `
		INSERT INTO design_events (study_id, arm, version, rev, anchor, closer, farther)
		SELECT $1, $7, u.v, u.rev, u.a, u.c, u.f FROM unnest($2::bigint[], $3::text[], $4::int[], $5::int[], $6::int[]) AS u(v, rev, a, c, f)`
	saveSnapshotSQL = `
		UPDATE design_states SET version = $2, rev = $3, progress = $4, snapshot = $5,
			snapshot_version = $2, snapshot_rev = $3, updated_at = now()
		WHERE study_id = $1 AND arm = $6`
	advanceStateSQL = `
		UPDATE design_states SET version = $2, rev = $3, progress = $4, updated_at = now()
		WHERE study_id = $1 AND arm = $5`
)

// inboxEntry is an answer waiting in design_inbox.
type inboxEntry struct {
	id          int64
	participant int64
	t           triplet.Triplet
}

// recordInbox is one writer transaction: it records up to inboxBatch
// answers of the arm's inbox and returns how many.
func (ds *DesignScheduler) recordInbox(ctx context.Context, key armKey) (int, error) {
	ds.stats.steps.Add(1)
	tx, err := ds.db.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, asyncCommitSQL); err != nil {
		return 0, err
	}
	row, e, unlock, err := ds.lockState(ctx, tx, key)
	if errors.Is(err, errNoState) {
		return 0, nil // answers come after the state's creation: nothing to record
	}
	if err != nil {
		return 0, err
	}
	unlockOnce := sync.OnceFunc(unlock)
	defer unlockOnce()
	entries, err := readInbox(ctx, tx, key, inboxBatch)
	if err != nil || len(entries) == 0 {
		return 0, err
	}
	// From here the cached state runs ahead of the database until the
	// commit; on any failure it is dropped and the next writer reloads.
	if _, err := ds.record(ctx, tx, key, row, e, entries); err != nil {
		e.d, e.pool = nil, nil
		return 0, err
	}
	if err := tx.Commit(ctx); err != nil {
		e.d, e.pool = nil, nil
		return 0, err
	}
	// Read under the arm's lock what the steps after it need; the
	// statistics (analyzeOnce) are not the arm's to wait for.
	poolRows := len(e.pool)
	w, ok := e.d.(interface{ WarmedUp() bool })
	warmed := ok && w.WarmedUp()
	unlockOnce()
	ds.clearFull(key) // leases released, comparisons perhaps opened
	ds.analyzeOnce(ctx, key, poolRows)
	ds.measureLevel(ctx, key)
	if warmed {
		ds.noteWarming(key, false)
	}
	return len(entries), nil
}

// readInbox reads up to limit answers of the arm's inbox, in order.
func readInbox(ctx context.Context, tx pgx.Tx, key armKey, limit int) ([]inboxEntry, error) {
	rows, err := tx.Query(ctx, readInboxSQL, key.study, key.arm, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (inboxEntry, error) {
		var en inboxEntry
		err := r.Scan(&en.id, &en.participant, &en.t.Anchor, &en.t.Closer, &en.t.Farther)
		return en, err
	})
}

// record records entries in e's design and writes what changed: the inbox
// rows deleted, their leases released, the accepted answers appended to
// design_events, the pool rows the new state changed, the state's version
// and progress (and a snapshot every SnapshotEvery events). It returns the
// state row as it wrote it.
func (ds *DesignScheduler) record(ctx context.Context, tx pgx.Tx, key armKey, row stateRow, e *cachedState, entries []inboxEntry) (stateRow, error) {
	studyID := key.study
	ids := make([]int64, len(entries))
	var lp []int64
	var la, lj, lk []int32
	var ev struct {
		v       []int64
		rev     []string
		a, c, f []int32
	}
	v, rev := row.version, row.rev
	// An active design's pool rows change with its answers alone, but all
	// of them appear at the end of its warm-up.
	wasWarm := false
	if a, ok := e.d.(*active.Design); ok {
		wasWarm = a.WarmedUp()
	}
	for i, en := range entries {
		ids[i] = en.id
		k := triplet.KeyOf(en.t)
		lp, la, lj, lk = append(lp, en.participant), append(la, int32(k.Anchor)), append(lj, int32(k.J)), append(lk, int32(k.K))
		if e.d.Record(en.t) {
			v, rev = v+1, secret.NewID()
			ev.v, ev.rev = append(ev.v, v), append(ev.rev, rev)
			ev.a, ev.c, ev.f = append(ev.a, int32(en.t.Anchor)), append(ev.c, int32(en.t.Closer)), append(ev.f, int32(en.t.Farther))
		}
	}
	b := &pgx.Batch{}
	b.Queue(deleteInboxSQL, ids)
	b.Queue(releaseLeasesSQL, studyID, lp, la, lj, lk)
	br := tx.SendBatch(ctx, b)
	released := map[triplet.Key]int32{}
	err := func() error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		return scanKeys(br, func(k triplet.Key) { released[k]++ })
	}()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return row, err
	}

	var write []poolWrite
	var drop []triplet.Key
	if c, ok := e.d.(countingDesign); ok && e.whole && ds.kind.spread && (ds.PoolWindow <= 0 || c.Comparisons() <= ds.PoolWindow) {
		write, drop = countedPoolChanges(c, e, entries, released)
	} else if a, ok := e.d.(*active.Design); ok && e.whole && (wasWarm || !a.WarmedUp()) {
		write, drop = activePoolChanges(a, e, entries, released)
	} else {
		write, drop = ds.poolChanges(e, released)
	}
	b = &pgx.Batch{}
	if len(released) > 0 {
		var a, j, k, n []int32
		for key, c := range released {
			a, j, k, n = append(a, int32(key.Anchor)), append(j, int32(key.J)), append(k, int32(key.K)), append(n, c)
		}
		b.Queue(poolReleaseSQL, studyID, a, j, k, n, key.arm)
	}
	// Rows the pool already holds are updated in place; only new rows need
	// poolWriteSQL's count of the leases out on them.
	var updates, inserts []poolWrite
	for _, w := range write {
		if _, had := e.pool[w.key]; had {
			updates = append(updates, w)
		} else {
			inserts = append(inserts, w)
		}
	}
	if len(updates) > 0 {
		b.Queue(poolUpdateSQL, ds.poolWriteArgs(key, updates)...)
	}
	if len(inserts) > 0 {
		b.Queue(poolWriteSQL, ds.poolWriteArgs(key, inserts)...)
	}
	if len(drop) > 0 {
		b.Queue(poolDropSQL, poolDropArgs(key, drop)...)
	}
	accepted := len(ev.v) > 0
	out := row
	if accepted {
		b.Queue(insertEventsSQL, studyID, ev.v, ev.rev, ev.a, ev.c, ev.f, key.arm)
		prog, err := json.Marshal(progressOf(e.d))
		if err != nil {
			return row, err
		}
		every := int64(max(ds.SnapshotEvery, 1))
		out.version, out.rev = v, rev
		if v-row.snapVersion >= every || e.d.Done() {
			snap, err := e.d.MarshalState()
			if err != nil {
				return row, fmt.Errorf("snapshot: %w", err)
			}
			b.Queue(saveSnapshotSQL, studyID, v, rev, prog, snap, key.arm)
			out.snapVersion, out.snapRev = v, rev
		} else {
			b.Queue(advanceStateSQL, studyID, v, rev, prog, key.arm)
		}
	}
	if b.Len() == 0 {
		e.whole = true
		return out, nil
	}
	deleted := map[triplet.Key]bool{}
	br = tx.SendBatch(ctx, b)
	err = func() error {
		if len(released) > 0 {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		if len(updates) > 0 {
			tag, err := br.Exec()
			if err != nil {
				return err
			}
			if tag.RowsAffected() != int64(len(updates)) {
				// The cached pool is not the stored one: fail the pass, and
				// the next writer reloads it.
				return fmt.Errorf("design pool: %d of %d rows updated", tag.RowsAffected(), len(updates))
			}
		}
		if len(inserts) > 0 {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		if len(drop) > 0 {
			if err := scanKeys(br, func(k triplet.Key) { deleted[k] = true }); err != nil {
				return err
			}
		}
		if accepted {
			for range 2 {
				if _, err := br.Exec(); err != nil {
					return err
				}
			}
		}
		return nil
	}()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return row, err
	}
	e.notePool(write, deleted)
	e.version, e.rev, e.whole = v, rev, true
	return out, nil
}

// poolWriteArgs are the arguments of poolWriteSQL and poolUpdateSQL that
// write rows to the pool of arm key.
func (ds *DesignScheduler) poolWriteArgs(key armKey, rows []poolWrite) []any {
	var a, j, k, wanted []int32
	var ord []int64
	for _, w := range rows {
		a, j, k = append(a, int32(w.key.Anchor)), append(j, int32(w.key.J)), append(k, int32(w.key.K))
		wanted, ord = append(wanted, int32(w.wanted)), append(ord, w.ord)
	}
	return []any{key.study, a, j, k, wanted, ord, ds.kind.spread, key.arm}
}

// poolDropArgs are the arguments of poolDropSQL that drop the rows of
// comparisons keys from the pool of arm key.
func poolDropArgs(key armKey, keys []triplet.Key) []any {
	var a, j, k []int32
	for _, dk := range keys {
		a, j, k = append(a, int32(dk.Anchor)), append(j, int32(dk.J)), append(k, int32(dk.K))
	}
	return []any{key.study, a, j, k, key.arm}
}

// notePool records in e's pool the rows written and deleted.
func (e *cachedState) notePool(write []poolWrite, deleted map[triplet.Key]bool) {
	for _, w := range write {
		e.pool[w.key] = poolRow{wanted: w.wanted, ord: w.ord}
	}
	for k := range deleted {
		delete(e.pool, k)
	}
}

// scanKeys reads the next result of br, rows of (anchor, j, k), into add.
func scanKeys(br pgx.BatchResults, add func(triplet.Key)) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k triplet.Key
		if err := rows.Scan(&k.Anchor, &k.J, &k.K); err != nil {
			return err
		}
		add(k)
	}
	return rows.Err()
}

// poolWrite is a pool row to write: its comparison's new wanted and ord.
type poolWrite struct {
	key    triplet.Key
	wanted int
	ord    int64
}

// poolChanges compares the pool rows e holds with the window of the
// design's open comparisons now: it returns the rows to write (new, wanted
// changed, or for basis every open one: its order is its place in the
// list; for the active design its place in the pool) and the comparisons
// whose rows may go (wanted 0, or a lease released on a row no longer
// wanted).
func (ds *DesignScheduler) poolChanges(e *cachedState, released map[triplet.Key]int32) (write []poolWrite, drop []triplet.Key) {
	var needs []design.Need
	var ords []int64
	if ds.kind.open != nil {
		needs, ords = ds.kind.open(e.d)
	} else {
		needs = e.d.Open(nil, ds.PoolWindow)
	}
	open := make(map[triplet.Key]bool, len(needs))
	for i, nd := range needs {
		open[nd.Key] = true
		old, had := e.pool[nd.Key]
		ord := int64(i)
		if ords != nil {
			ord = ords[i]
		}
		if ds.kind.spread {
			if had {
				ord = old.ord
			} else {
				ord = e.nextOrd
				e.nextOrd++
			}
		}
		if !had || old.wanted != nd.Answers || old.ord != ord {
			write = append(write, poolWrite{key: nd.Key, wanted: nd.Answers, ord: ord})
		}
	}
	for k, old := range e.pool {
		if open[k] {
			continue
		}
		if old.wanted != 0 {
			write = append(write, poolWrite{key: k, wanted: 0, ord: old.ord})
			drop = append(drop, k)
		} else if released[k] > 0 {
			drop = append(drop, k)
		}
	}
	return write, drop
}

// countingDesign is a design whose open comparisons are fixed from the
// start, each wanted a number of times (the landmark designs).
type countingDesign interface {
	Comparisons() int
	Repeats() int
	Index(k triplet.Key) (int, bool)
	Count(i int) int
}

// countedPoolChanges is poolChanges for a counting design whose every
// comparison fits in the pool window: the pool holds every comparison
// still wanted from the design's start, so recording answers changes only
// the rows of the comparisons answered (their wanted) and of those whose
// leases were released; no comparison enters. It gives what poolChanges
// gives, in time proportional to the answers instead of the window (the
// window's walk was the writer's main cost, TestCountedPoolChanges).
func countedPoolChanges(c countingDesign, e *cachedState, entries []inboxEntry, released map[triplet.Key]int32) (write []poolWrite, drop []triplet.Key) {
	return touchedPoolChanges(e, entries, released, func(k triplet.Key, old poolRow) (int, int64) {
		if i, ok := c.Index(k); ok {
			return max(c.Repeats()-c.Count(i), 0), old.ord
		}
		return 0, old.ord // not a comparison of the design
	})
}

// activePoolChanges is poolChanges for the active design while its pool
// stays the same (no refresh, no end of the warm-up in between): only the
// rows of the questions answered and of those whose leases were released
// change, as countedPoolChanges has it for the landmark designs; the walk
// of a pool of thousands after every writer pass was the writer's main
// cost (BenchmarkActiveServing).
func activePoolChanges(a *active.Design, e *cachedState, entries []inboxEntry, released map[triplet.Key]int32) (write []poolWrite, drop []triplet.Key) {
	return touchedPoolChanges(e, entries, released, func(k triplet.Key, old poolRow) (int, int64) {
		if i, ok := a.PoolIndex(k); ok && a.WarmedUp() {
			return a.Left(i), int64(i)
		}
		return 0, old.ord
	})
}

// touchedPoolChanges is what countedPoolChanges and activePoolChanges
// share: the rows of the comparisons answered (entries) and released,
// each with the wanted and ord that now gives it, written where they
// changed and dropped once wanted (the drop statement also waits for no
// lease out). A comparison the pool does not hold and the design does not
// want is left alone.
func touchedPoolChanges(e *cachedState, entries []inboxEntry, released map[triplet.Key]int32,
	now func(k triplet.Key, old poolRow) (wanted int, ord int64)) (write []poolWrite, drop []triplet.Key) {
	touched := make(map[triplet.Key]bool, len(entries)+len(released))
	for _, en := range entries {
		touched[triplet.KeyOf(en.t)] = true
	}
	for k := range released {
		touched[k] = true
	}
	for k := range touched {
		old, had := e.pool[k]
		wanted, ord := now(k, old)
		if !had && wanted == 0 {
			continue // not in the pool, or answered before its row was written
		}
		if !had || wanted != old.wanted || ord != old.ord {
			write = append(write, poolWrite{key: k, wanted: wanted, ord: ord})
		}
		if wanted == 0 && (old.wanted != 0 || released[k] > 0) {
			drop = append(drop, k)
		}
	}
	// The order of the rows written does not matter to PostgreSQL, but a
	// fixed one keeps the writer's statements reproducible.
	slices.SortFunc(write, func(a, b poolWrite) int { return cmp.Compare(a.ord, b.ord) })
	slices.SortFunc(drop, func(a, b triplet.Key) int { return cmp.Compare(e.pool[a].ord, e.pool[b].ord) })
	return write, drop
}

// writePool writes the first pool of a new state e (a design just built).
func (ds *DesignScheduler) writePool(ctx context.Context, tx pgx.Tx, key armKey, e *cachedState) error {
	write, _ := ds.poolChanges(e, nil)
	e.whole = true
	if len(write) == 0 {
		return nil
	}
	e.notePool(write, nil)
	_, err := tx.Exec(ctx, poolWriteSQL, ds.poolWriteArgs(key, write)...)
	return err
}

// pendingStudiesSQL lists the arms of studies with answers their design
// has not recorded, with the arm's design.
const pendingStudiesSQL = `
	SELECT s.id, i.arm, coalesce(s.arms -> i.arm ->> 'design', s.design)
	FROM (SELECT DISTINCT study_id, arm FROM design_inbox) i JOIN studies s ON s.id = i.study_id`

// RecordPending records in their designs the answers left in the inbox by
// a writer that failed or a process that stopped between an answer's
// commit and its recording. The server calls it at start-up and then
// periodically; it returns when they are recorded.
func (s *Store) RecordPending(ctx context.Context) error {
	rows, err := s.pool.Query(ctx, pendingStudiesSQL)
	if err != nil {
		return fmt.Errorf("record pending answers: %w", err)
	}
	type pending struct {
		key    armKey
		design string
	}
	arms, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (pending, error) {
		var p pending
		err := r.Scan(&p.key.study, &p.key.arm, &p.design)
		return p, err
	})
	if err != nil {
		return fmt.Errorf("record pending answers: %w", err)
	}
	for _, p := range arms {
		if ds, ok := s.designs[p.design]; ok {
			ds.recordPending(ctx, p.key)
		}
	}
	return ctx.Err()
}
