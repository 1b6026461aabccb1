package collect

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/triplet"
)

// Defaults of a DesignScheduler.
const (
	DefaultLeaseTTL      = 2 * time.Minute
	DefaultSnapshotEvery = 500
)

// DesignScheduler drives a stateful question design (internal/landmark,
// internal/basis) from the store. The design's state lives in PostgreSQL
// (design_states, design_events, design_leases; migration 000002) and every
// question and answer of the study locks the study's design_states row, so
// any number of processes can serve one study: they take turns per study.
//
// Next restores the state (from the process's cache when it is current),
// takes the design's open comparisons most wanted first, leaves out those
// whose remaining answers are all out on active leases and those the
// participant was already asked, and leases the first one to the participant
// for LeaseTTL. With nothing open (a basis scheme waiting on answers it
// depends on, a covered landmark design) it serves a random question,
// recorded as DesignFallback. Record releases the answered question's lease
// and records the answer in the design when the question was a design
// question, appending it to design_events and bumping the version; every
// SnapshotEvery events the full state is saved as the new snapshot.
type DesignScheduler struct {
	// LeaseTTL is how long a comparison stays handed to a question; after
	// it the comparison returns to the pool (the question stays open and
	// its late answer still counts if the design still wants it).
	LeaseTTL time.Duration
	// SnapshotEvery is how many recorded answers pass between snapshots;
	// a process without the state in memory replays at most that many.
	SnapshotEvery int

	name  string
	kind  designKind
	mu    sync.Mutex
	cache map[int64]*cachedState
	stats struct{ hits, replays, restores atomic.Int64 }
}

// NewDesignScheduler returns the scheduler of one of the stateful designs
// (DesignLandmarkK1, DesignLandmarkK2, DesignBasis).
func NewDesignScheduler(name string) (*DesignScheduler, error) {
	ds := &DesignScheduler{LeaseTTL: DefaultLeaseTTL, SnapshotEvery: DefaultSnapshotEvery,
		name: name, cache: map[int64]*cachedState{}}
	switch name {
	case DesignLandmarkK1, DesignLandmarkK2:
		ds.kind = landmarkKind
	case DesignBasis:
		ds.kind = basisKind
	default:
		return nil, fmt.Errorf("unknown stateful design %q", name)
	}
	return ds, nil
}

// RegisterDesigns registers the landmark-k1, landmark-k2 and basis designs
// on s and returns their schedulers by name.
func RegisterDesigns(s *Store) map[string]*DesignScheduler {
	out := map[string]*DesignScheduler{}
	for _, name := range []string{DesignLandmarkK1, DesignLandmarkK2, DesignBasis} {
		ds, err := NewDesignScheduler(name)
		if err != nil {
			panic(err) // the names above are known
		}
		s.RegisterDesign(name, ds)
		out[name] = ds
	}
	return out
}

// CacheStats counts how the scheduler found the states it needed: current
// in memory, brought up to date by replaying events, or restored from the
// snapshot.
type CacheStats struct{ Hits, Replays, Restores int64 }

// CacheStats returns the scheduler's cache counters.
func (ds *DesignScheduler) CacheStats() CacheStats {
	return CacheStats{Hits: ds.stats.hits.Load(), Replays: ds.stats.replays.Load(), Restores: ds.stats.restores.Load()}
}

// The SQL of the design scheduler's leases and events, by name so that
// TestHotQueryPlans explains these very strings on a large study.
const (
	insertLeaseSQL = `
		INSERT INTO design_leases (participant_id, anchor, j, k, study_id, expires_at)
		VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`
	activeLeasesSQL = `
		SELECT anchor, j, k, count(*) FROM design_leases
		WHERE study_id = $1 AND expires_at > now() GROUP BY anchor, j, k`
	// releaseLeaseSQL deletes the lease of the answered question of a
	// comparison (see record).
	releaseLeaseSQL = `
		DELETE FROM design_leases l USING questions q
		WHERE l.study_id = $1 AND l.anchor = $2 AND l.j = $3 AND l.k = $4
			AND q.participant_id = l.participant_id AND q.anchor = l.anchor
			AND least(q.left_idx, q.right_idx) = l.j AND greatest(q.left_idx, q.right_idx) = l.k
			AND q.answered_at IS NOT NULL`
	insertEventSQL = `
		INSERT INTO design_events (study_id, version, rev, anchor, closer, farther)
		VALUES ($1, $2, $3, $4, $5, $6)`
	saveSnapshotSQL = `
		UPDATE design_states SET version = $2, rev = $3, progress = $4, snapshot = $5,
			snapshot_version = $2, snapshot_rev = $3, updated_at = now()
		WHERE study_id = $1`
	advanceStateSQL = `
		UPDATE design_states SET version = $2, rev = $3, progress = $4, updated_at = now()
		WHERE study_id = $1`
)

// Next implements Scheduler.
func (ds *DesignScheduler) Next(ctx context.Context, tx pgx.Tx, ask Ask) (Comparison, error) {
	c, err := ds.next(ctx, tx, ask)
	if err != nil {
		return Comparison{}, fmt.Errorf("%s design: %w", ds.name, err)
	}
	return c, nil
}

func (ds *DesignScheduler) next(ctx context.Context, tx pgx.Tx, ask Ask) (Comparison, error) {
	_, e, unlock, err := ds.lockState(ctx, tx, ask.Study, ask.Items, true)
	if err != nil {
		return Comparison{}, err
	}
	defer unlock()
	leased, err := activeLeases(ctx, tx, ask.Study.ID)
	if err != nil {
		return Comparison{}, err
	}
	asked, err := askedKeys(ctx, tx, ask.ParticipantID)
	if err != nil {
		return Comparison{}, err
	}
	// Each leased or asked comparison hides at most one of the open ones,
	// so this many hold one that is neither, if the design has one.
	limit := len(leased) + len(asked) + 1
	var pick *design.Need
	bestFree := 0
	for _, nd := range e.d.Open(make([]design.Need, 0, min(limit, 1024)), limit) {
		free := nd.Answers - leased[nd.Key]
		if _, dup := asked[nd.Key]; dup || free <= 0 {
			continue
		}
		if !ds.kind.spread {
			pick = &nd // the design's order: most wanted first
			break
		}
		// Least answered first counting the answers out on lease, so
		// coverage grows evenly under concurrency. Open lists the
		// comparisons by decreasing Answers and the list holds one
		// without a lease, so the best here is the best of all.
		if free > bestFree {
			pick, bestFree = &nd, free
		}
	}
	if pick == nil {
		c, err := RandomScheduler{}.Next(ctx, tx, ask)
		if err != nil {
			return Comparison{}, err
		}
		c.Design = DesignFallback
		return c, nil
	}
	k := pick.Key
	if _, err := tx.Exec(ctx, insertLeaseSQL,
		ask.ParticipantID, k.Anchor, k.J, k.K, ask.Study.ID, ds.LeaseTTL.Seconds()); err != nil {
		return Comparison{}, err
	}
	c := Comparison{Anchor: k.Anchor, Left: k.J, Right: k.K}
	if rand.IntN(2) == 1 {
		c.Left, c.Right = c.Right, c.Left
	}
	return c, nil
}

// activeLeases counts the unexpired leases of a study per comparison.
func activeLeases(ctx context.Context, tx pgx.Tx, studyID int64) (map[triplet.Key]int, error) {
	rows, err := tx.Query(ctx, activeLeasesSQL, studyID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[triplet.Key]int{}
	for rows.Next() {
		var k triplet.Key
		var n int
		if err := rows.Scan(&k.Anchor, &k.J, &k.K, &n); err != nil {
			return nil, err
		}
		m[k] = n
	}
	return m, rows.Err()
}

// Record implements Scheduler.
func (ds *DesignScheduler) Record(ctx context.Context, tx pgx.Tx, st Study, t triplet.Triplet) error {
	if err := ds.record(ctx, tx, st, t); err != nil {
		return fmt.Errorf("%s design: %w", ds.name, err)
	}
	return nil
}

func (ds *DesignScheduler) record(ctx context.Context, tx pgx.Tx, st Study, t triplet.Triplet) error {
	k := triplet.KeyOf(t)
	// The question being answered is the only one of its comparison that
	// is answered and still holds a lease: the others released theirs in
	// the transactions that answered them. No lease: a fallback question.
	tag, err := tx.Exec(ctx, releaseLeaseSQL, st.ID, k.Anchor, k.J, k.K)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return nil
	}
	row, e, unlock, err := ds.lockState(ctx, tx, st, 0, false)
	if err != nil {
		return err
	}
	defer unlock()
	if !e.d.Record(t) {
		return nil // a surplus answer (its lease had expired): stored, not needed
	}
	// From here the cached state is ahead of the database until the
	// transaction commits; if anything fails it is dropped, and if the
	// transaction rolls back later the (version, rev) check reloads it.
	fail := func(err error) error { e.d = nil; return err }
	v, rev := row.version+1, newID()
	if _, err := tx.Exec(ctx, insertEventSQL, st.ID, v, rev, t.Anchor, t.Closer, t.Farther); err != nil {
		return fail(err)
	}
	prog, err := json.Marshal(progressOf(e.d))
	if err != nil {
		return fail(err)
	}
	every := int64(max(ds.SnapshotEvery, 1))
	if v-row.snapVersion >= every || e.d.Done() {
		snap, err := e.d.MarshalState()
		if err != nil {
			return fail(fmt.Errorf("snapshot: %w", err))
		}
		_, err = tx.Exec(ctx, saveSnapshotSQL, st.ID, v, rev, prog, snap)
		if err != nil {
			return fail(err)
		}
	} else if _, err := tx.Exec(ctx, advanceStateSQL, st.ID, v, rev, prog); err != nil {
		return fail(err)
	}
	e.version, e.rev = v, rev
	return nil
}
