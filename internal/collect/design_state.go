package collect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/active"
	"github.com/closer-lab/closer/internal/basis"
	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/landmark"
	"github.com/closer-lab/closer/internal/secret"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// designKind adapts a design package to the store: how to build a design
// from a study's settings and restore one from its snapshot.
type designKind struct {
	build   func(n int, name string, c study.DesignConfig) (design.Design, error)
	restore func(data []byte) (design.Design, error)
	// spread serves the comparison with the most answers still wanted
	// beyond its active leases (landmark designs: even coverage); without
	// it the design's own order wins and a comparison may be out to
	// several participants at once up to its repeats (basis: finish the
	// most wanted comparisons first, as basis.Run does).
	spread bool
	// async: an answer's request does not wait for the writer to record
	// it (the writer gathers answers for gatherDelay first), and questions
	// are issued one step ahead (asksAhead): the design's next questions do
	// not depend on the answer just given (landmark, active). Basis waits:
	// its open comparisons do.
	async bool
	// warmup: the design first asks random questions it records (the
	// active design's warm-up), issued without a pool (warmingUp,
	// insertActiveFallbackSQL).
	warmup bool
	// open, when set, gives the comparisons design_pool holds instead of
	// Open(nil, PoolWindow), with the ord of each (the active design: its
	// scored pool only, ord its place in the pool, never the random
	// questions Open adds).
	open func(d design.Design) ([]design.Need, []int64)
}

var landmarkKind = designKind{
	spread: true,
	async:  true,
	build: func(n int, name string, c study.DesignConfig) (design.Design, error) {
		return landmark.New(n, c.LandmarkConfig(name))
	},
	restore: func(data []byte) (design.Design, error) { return landmark.Restore(data) },
}

var basisKind = designKind{
	build: func(n int, _ string, c study.DesignConfig) (design.Design, error) {
		cfg := c.BasisConfig()
		if err := cfg.Validate(); err != nil {
			return nil, err
		}
		return basis.New(n, cfg), nil
	},
	restore: func(data []byte) (design.Design, error) { return basis.Restore(data) },
}

// activeKind runs the active design (internal/active). Its design_pool is
// the pool of the last refresh (ApplyActivePool) once the warm-up is over,
// the questions still wanted, in score order (band 0, prio = the place in
// the pool, which stays put while the pool is answered). During the
// warm-up, and when the pool is used up, the store serves random questions
// without a pool row (insertActiveFallbackSQL): recorded as 'active'
// during the warm-up, and the design records their answers (it accepts
// every answer); afterwards as random-fallback, which the design does not
// record, as no design records a fallback. So the warm-up counts exactly
// the answers the design recorded, and the questions Open offers at
// random (a different list after every answer) never churn design_pool.
var activeKind = designKind{
	async:  true,
	warmup: true,
	build: func(n int, _ string, c study.DesignConfig) (design.Design, error) {
		return active.New(n, c.ActiveConfig())
	},
	restore: func(data []byte) (design.Design, error) { return active.Restore(data) },
	open: func(d design.Design) ([]design.Need, []int64) {
		a := d.(*active.Design)
		if !a.WarmedUp() {
			return nil, nil
		}
		pool := a.Pool(nil)
		needs := make([]design.Need, 0, len(pool))
		ords := make([]int64, 0, len(pool))
		for i, q := range pool {
			if left := a.Left(i); left > 0 {
				needs = append(needs, design.Need{Key: q.Key, Answers: left})
				ords = append(ords, int64(i))
			}
		}
		return needs, ords
	},
}

func progressOf(d design.Design) study.DesignProgress {
	p := study.DesignProgress{Done: d.Done()}
	switch d := d.(type) {
	case *landmark.Design:
		lp := d.Progress()
		p.Landmark = &lp
		p.Landmarks = d.Landmarks()
	case *basis.Scheme:
		bp := d.Progress()
		p.Basis = &bp
	case *active.Design:
		p.Active = &study.ActiveProgress{Answers: d.Answered(), Warmup: d.Warmup(), Refreshes: d.Refreshes(),
			PoolSize: d.PoolSize(), PoolLeft: d.PoolLeft()}
	}
	return p
}

// cachedState is one study's design as a process last saw it: the state at
// (version, rev), and the pool rows as that state left them. mu guards
// every field: it serialises the entry's use inside the process; across
// processes (and between an evicted entry and its successor) the
// design_states row lock does (only the writer takes it).
type cachedState struct {
	mu      sync.Mutex // guards the fields below
	version int64
	rev     string
	d       design.Design // nil: must be loaded
	// pool is the design_pool rows of the study (key → wanted and ord) at
	// (version, rev); nil: must be read. nextOrd is the ord a new row gets.
	pool    map[triplet.Key]poolRow
	nextOrd int64
	// whole: pool holds every row of the design's window as this
	// process's last walk of it wrote them (countedPoolChanges may then
	// update the rows answered alone); false after pool is read from
	// PostgreSQL, whose rows may lack some (a pool lost, or a study from
	// before migration 000009).
	whole bool
}

// poolRow is what the writer keeps of a design_pool row.
type poolRow struct {
	wanted int
	ord    int64
}

// stateRow is a design_states row.
type stateRow struct {
	design               string
	items                int
	version, snapVersion int64
	rev, snapRev         string
}

// maxCachedArms bounds the arms whose design state a scheduler keeps in
// memory. Past it the least recently written arm's state goes; its next
// writer restores it from the snapshot (at most SnapshotEvery events to
// replay). An evicted state still in a writer's hands is harmless: the
// design_states row lock, taken before the state's mutex, orders that
// writer before the next one, whose fresh entry syncs from PostgreSQL.
const maxCachedArms = 256

// entry returns the cache entry for an arm, creating an empty one.
func (ds *DesignScheduler) entry(key armKey) *cachedState {
	e, _ := ds.cache.GetOrAdd(key, func() *cachedState { return &cachedState{} })
	return e
}

// DropCache forgets every cached design state, as a restarted process
// would; the next writer of each study restores its state from PostgreSQL.
func (ds *DesignScheduler) DropCache() {
	ds.cache.Purge()
	ds.mu.Lock()
	defer ds.mu.Unlock()
	ds.started = map[armKey]bool{}
	ds.bands = map[armKey]int32{}
	ds.levels = map[armKey]*capLevel{}
	ds.full = map[armKey]time.Time{}
	ds.warming = map[armKey]bool{}
}

// The SQL that reads a design's state, by name so that TestHotQueryPlans
// explains these very strings on a large study.
const (
	stateRowSQL = `
		SELECT design, items, version, rev, snapshot_version, snapshot_rev
		FROM design_states WHERE study_id = $1 AND arm = $2`
	lockDesignStateSQL = stateRowSQL + ` FOR UPDATE`
	eventRevSQL        = `SELECT rev FROM design_events WHERE study_id = $1 AND arm = $2 AND version = $3`
	snapshotSQL        = `SELECT snapshot FROM design_states WHERE study_id = $1 AND arm = $2`
	replayEventsSQL    = `
		SELECT version, rev, anchor, closer, farther FROM design_events
		WHERE study_id = $1 AND arm = $2 AND version > $3 ORDER BY version`
	poolRowsSQL = `SELECT anchor, j, k, wanted, ord FROM design_pool WHERE study_id = $1 AND arm = $2`
)

// scanStateRow reads a design_states row.
func scanStateRow(r pgx.Row) (stateRow, error) {
	var row stateRow
	err := r.Scan(&row.design, &row.items, &row.version, &row.rev, &row.snapVersion, &row.snapRev)
	return row, err
}

// lockState locks the arm's design_states row for the transaction (the
// writer's lock) and returns the arm's cached state brought up to the
// row's version with its pool rows read, with its mutex held: the caller
// must call unlock. An arm without a state is errNoState.
func (ds *DesignScheduler) lockState(ctx context.Context, tx pgx.Tx, key armKey) (row stateRow, e *cachedState, unlock func(), err error) {
	row, err = scanStateRow(tx.QueryRow(ctx, lockDesignStateSQL, key.study, key.arm))
	if errors.Is(err, pgx.ErrNoRows) {
		return row, nil, nil, errNoState
	}
	if err != nil {
		return row, nil, nil, err
	}
	if row.design != ds.name {
		return row, nil, nil, fmt.Errorf("study %d arm %d: design state is %q, scheduler is %q", key.study, key.arm, row.design, ds.name)
	}
	e = ds.entry(key)
	e.mu.Lock()
	if err := ds.sync(ctx, tx, key, row, e); err != nil {
		e.d, e.pool = nil, nil
		e.mu.Unlock()
		return row, nil, nil, err
	}
	if e.pool == nil {
		if err := e.readPool(ctx, tx, key); err != nil {
			e.d, e.pool = nil, nil
			e.mu.Unlock()
			return row, nil, nil, err
		}
	}
	return row, e, e.mu.Unlock, nil
}

// readPool reads the arm's pool rows into e.
func (e *cachedState) readPool(ctx context.Context, tx pgx.Tx, key armKey) error {
	rows, err := tx.Query(ctx, poolRowsSQL, key.study, key.arm)
	if err != nil {
		return err
	}
	defer rows.Close()
	e.pool, e.nextOrd, e.whole = map[triplet.Key]poolRow{}, 0, false
	for rows.Next() {
		var k triplet.Key
		var r poolRow
		if err := rows.Scan(&k.Anchor, &k.J, &k.K, &r.wanted, &r.ord); err != nil {
			return err
		}
		e.pool[k] = r
		e.nextOrd = max(e.nextOrd, r.ord+1)
	}
	return rows.Err()
}

// ensureState creates the arm's design state and its first pool, from its
// settings over n items, in the transaction of the question that needs
// them (the arm's first design question). A concurrent creator wins
// harmlessly: ON CONFLICT DO NOTHING waits for it and keeps its rows, which
// are the same (the design is deterministic).
func (ds *DesignScheduler) ensureState(ctx context.Context, tx pgx.Tx, st studyState, n int) error {
	var rawConfig []byte
	var arms []study.Arm
	if err := tx.QueryRow(ctx, `SELECT design_config, arms FROM studies WHERE id = $1`, st.ID).Scan(&rawConfig, &arms); err != nil {
		return err
	}
	var c study.DesignConfig
	if err := json.Unmarshal(rawConfig, &c); err != nil {
		return fmt.Errorf("study %s: design settings: %w", st.Slug, err)
	}
	if len(arms) > 0 {
		if st.Arm >= len(arms) || arms[st.Arm].Design != ds.name {
			return fmt.Errorf("study %s: arm %d is not a %s arm", st.Slug, st.Arm, ds.name)
		}
		c = arms[st.Arm].Config
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return err
	}
	d, err := ds.kind.build(n, ds.name, c)
	if err != nil {
		return study.Errorf(study.KindNotOpen, "the study's design settings do not fit its %d items: %v", n, err)
	}
	snap, err := d.MarshalState()
	if err != nil {
		return fmt.Errorf("study %s: snapshot: %w", st.Slug, err)
	}
	prog, err := json.Marshal(progressOf(d))
	if err != nil {
		return err
	}
	rev := secret.NewID()
	tag, err := tx.Exec(ctx, `
		INSERT INTO design_states (study_id, arm, design, config, items, version, rev, snapshot, snapshot_version, snapshot_rev, progress)
		VALUES ($1, $8, $2, $3, $4, 0, $5, $6, 0, $5, $7) ON CONFLICT (study_id, arm) DO NOTHING`,
		st.ID, ds.name, raw, n, rev, snap, prog, st.Arm)
	if err != nil || tag.RowsAffected() == 0 {
		return err // created by another question meanwhile
	}
	e := &cachedState{d: d, version: 0, rev: rev, pool: map[triplet.Key]poolRow{}}
	if err := ds.writePool(ctx, tx, keyOf(st), e); err != nil {
		return err
	}
	// Cached only now: if this transaction rolls back, another creator's
	// rev differs and the next writer reloads.
	ds.cache.Add(keyOf(st), e)
	return nil
}

// sync brings e to the row's (version, rev): nothing to do on the common
// path (this process wrote the last version); replaying the events this
// process missed when its state lies on the stored history; else restoring
// the snapshot and replaying the events after it. The pool rows are read
// again unless the state was current (another writer changed them).
func (ds *DesignScheduler) sync(ctx context.Context, tx pgx.Tx, key armKey, row stateRow, e *cachedState) error {
	if e.d != nil && e.version == row.version && e.rev == row.rev {
		ds.stats.hits.Add(1)
		return nil
	}
	e.pool = nil
	if e.d != nil && e.version >= row.snapVersion && e.version < row.version {
		rev := row.snapRev
		if e.version > row.snapVersion {
			if err := tx.QueryRow(ctx, eventRevSQL, key.study, key.arm, e.version).Scan(&rev); err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
		}
		if rev == e.rev {
			ds.stats.replays.Add(1)
			return ds.replay(ctx, tx, key, e)
		}
	}
	ds.stats.restores.Add(1)
	var snap []byte
	if err := tx.QueryRow(ctx, snapshotSQL, key.study, key.arm).Scan(&snap); err != nil {
		return err
	}
	d, err := ds.kind.restore(snap)
	if err != nil {
		return fmt.Errorf("restore design state: %w", err)
	}
	e.d, e.version, e.rev = d, row.snapVersion, row.snapRev
	return ds.replay(ctx, tx, key, e)
}

// replay records the events after e.version into e.
func (ds *DesignScheduler) replay(ctx context.Context, tx pgx.Tx, key armKey, e *cachedState) error {
	rows, err := tx.Query(ctx, replayEventsSQL, key.study, key.arm, e.version)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var v int64
		var rev string
		var t triplet.Triplet
		if err := rows.Scan(&v, &rev, &t.Anchor, &t.Closer, &t.Farther); err != nil {
			return err
		}
		if v != e.version+1 {
			return fmt.Errorf("replay design state: event %d follows %d", v, e.version)
		}
		if !e.d.Record(t) {
			return fmt.Errorf("replay design state: event %d %v was not accepted", v, t)
		}
		e.version, e.rev = v, rev
	}
	return rows.Err()
}

// DesignState returns the design of arm `arm` of a study (0 for a study
// without arms) as stored (the snapshot with the later events replayed),
// independent of any cache: a *landmark.Design, a *basis.Scheme or an
// *active.Design, a copy of its own. It reads one snapshot of the database
// (a read-only repeatable-read transaction) and takes no lock. An arm
// whose design has no state (no question yet, or a random arm) is
// KindNotFound.
func (s *Store) DesignState(ctx context.Context, studyID int64, arm int) (design.Design, error) {
	var d design.Design
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		d, _, err = s.storedState(ctx, tx, armKey{studyID, arm})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("design state: %w", err)
	}
	return d, nil
}

// storedState restores an arm's design in tx, independent of caches, with
// its state row; KindNotFound without one.
func (s *Store) storedState(ctx context.Context, tx pgx.Tx, key armKey) (design.Design, stateRow, error) {
	row, err := scanStateRow(tx.QueryRow(ctx, stateRowSQL, key.study, key.arm))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, row, study.NotFound("design state")
	}
	if err != nil {
		return nil, row, err
	}
	ds, ok := s.designs[row.design]
	if !ok {
		return nil, row, fmt.Errorf("design %q is not registered", row.design)
	}
	e := &cachedState{}
	if err := ds.sync(ctx, tx, key, row, e); err != nil {
		return nil, row, err
	}
	return e.d, row, nil
}

// errNoState means a study has no design state yet.
var errNoState = errors.New("no design state")
