package collect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/closer-lab/closer/internal/active"
	"github.com/closer-lab/closer/internal/secret"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// The active design in the store (issue 16). A request never scores: it
// claims a question from the arm's design_pool like every stateful design,
// or gets a random question (a warm-up question of the design, or a
// random-fallback once the warm-up is over and the pool is used up;
// activeKind). The recompute worker keeps the pool filled:
//
//  1. ActiveArms reads each active arm's design from PostgreSQL, a copy of
//     its own, which the worker fits and scores outside any lock
//     (State.NextPool(x, answers), which changes nothing);
//  2. ApplyActivePool hands the scored questions to the arm's writer: under
//     the arm's design_states row lock it records what the inbox holds,
//     installs the pool on the latest state (active.Design.ApplyPool),
//     saves a snapshot at once (a refresh depends on the fit, so replaying
//     design_events, which holds answers only, could not redo it) and
//     rewrites the arm's design_pool rows in the pool's order, all in one
//     transaction.
//
// A crash before that transaction commits changes nothing: the next
// refresh starts again from the stored answers. After it, every process
// restores the snapshot (its rev changed) and serves the same pool.

// ActiveArm is an arm whose design is active, as ActiveArms reads it.
type ActiveArm struct {
	// Arm is the arm's number (0 in a study without arms), Name its name.
	Arm  int
	Name string
	// Config is the arm's settings.
	Config study.DesignConfig
	// Format is the study's question format: an odd-one-out or rank
	// study's pool is a pool of trials (ApplyTrialPool).
	Format study.StudyFormat
	// State is the arm's design as stored, restored from PostgreSQL: a
	// copy of its own, independent of every cache, safe to call NextPool
	// on (or anything else). nil when the arm has no state yet (its first
	// question creates it, with the items present then).
	State *active.Design
	// Version is the number of answers the design had recorded when State
	// was read (design_states.version; 0 without a state).
	Version int64
}

// ActiveArms returns the study's arms whose design is active, in arm
// order, read from one snapshot of the database (a read-only
// repeatable-read transaction, no lock). A study without arms whose
// design is active has one, arm 0. An unknown study is KindNotFound.
func (s *Store) ActiveArms(ctx context.Context, studyID int64) ([]ActiveArm, error) {
	var out []ActiveArm
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var st study.Study
		var raw []byte
		var format string
		err := tx.QueryRow(ctx, `SELECT design, design_config, arms, format FROM studies WHERE id = $1 AND deleted_at IS NULL`, studyID).
			Scan(&st.Design, &raw, &st.Arms, &format)
		if errors.Is(err, pgx.ErrNoRows) {
			return study.NotFound("study")
		}
		if err != nil {
			return err
		}
		var cfg study.DesignConfig
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return err
		}
		for i, a := range study.ArmsOf(st, cfg) {
			if a.Design != study.DesignActive {
				continue
			}
			aa := ActiveArm{Arm: i, Name: a.Name, Config: a.Config, Format: study.MustStudyFormat(format)}
			d, row, err := s.storedState(ctx, tx, armKey{studyID, i})
			switch {
			case KindOf(err) == study.KindNotFound:
			case err != nil:
				return err
			default:
				ad, ok := d.(*active.Design)
				if !ok {
					return fmt.Errorf("arm %d: the design state is %T, not the active design's", i, d)
				}
				aa.State, aa.Version = ad, row.version
			}
			out = append(out, aa)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("active arms: %w", err)
	}
	return out, nil
}

// ApplyActivePool installs qs as the pool of the active design of arm
// `arm` of the study (0 without arms), as the arm's writer: in one
// transaction under the arm's design_states row lock it records the
// answers the inbox holds, calls ApplyPool(qs) on the latest state (so qs
// may come from a state some answers older, as NextPool on an ActiveArms
// copy gives it), saves a snapshot and rewrites the arm's design_pool rows
// in the pool's order: every question of qs wanted Repeats times, minus
// the leases already out on it; rows of the old pool no longer in it go,
// but those with leases out stay until their answers are recorded (they
// keep counting). Requests claim from the new rows as soon as it commits
// (synchronously: a crash after it keeps the pool). An arm without an
// active design state (no question yet) is KindNotFound; a pool
// ApplyPool refuses (questions over other items, more than the pool size)
// changes nothing.
func (s *Store) ApplyActivePool(ctx context.Context, studyID int64, arm int, qs []active.Question) error {
	ds, ok := s.designs[study.DesignActive]
	if !ok {
		return errors.New("apply active pool: the active design is not registered")
	}
	if err := ds.applyPool(ctx, armKey{studyID, arm}, qs, nil); err != nil {
		return fmt.Errorf("apply active pool: %w", err)
	}
	return nil
}

// ApplyTrialPool is ApplyActivePool for an odd-one-out or rank study
// (issue 27): qs[i] is a trial by its key (its anchor, j and k, the three
// items questions_comparison_once and the leases know it by) and
// options[i] the items it shows, all of one length (odd-one-out: its
// three items; rank: the N references of the query qs[i].Key.Anchor,
// j and k among them). The pool rows hold the items (design_pool.options)
// and a claim shows them in a fresh random order. A trial whose items are
// not distinct, do not hold its key, or differ in number from the others
// is refused and changes nothing.
func (s *Store) ApplyTrialPool(ctx context.Context, studyID int64, arm int, qs []active.Question, options [][]int) error {
	ds, ok := s.designs[study.DesignActive]
	if !ok {
		return errors.New("apply trial pool: the active design is not registered")
	}
	if len(options) != len(qs) {
		return fmt.Errorf("apply trial pool: %d trials with %d sets of items", len(qs), len(options))
	}
	for i, o := range options {
		k := qs[i].Key
		inRank := slices.Contains(o, k.J) && slices.Contains(o, k.K) && !slices.Contains(o, k.Anchor)
		inOdd := len(o) == 3 && slices.Contains(o, k.Anchor) && slices.Contains(o, k.J) && slices.Contains(o, k.K)
		if len(o) < 3 || len(o) != len(options[0]) || (!inRank && !inOdd) || hasDuplicate(o) {
			return fmt.Errorf("apply trial pool: trial %d (%d; %d, %d) shows %v", i, k.Anchor, k.J, k.K, o)
		}
	}
	if err := ds.applyPool(ctx, armKey{studyID, arm}, qs, options); err != nil {
		return fmt.Errorf("apply trial pool: %w", err)
	}
	return nil
}

// hasDuplicate reports whether xs holds a value twice.
func hasDuplicate(xs []int) bool {
	for i, x := range xs {
		if slices.Contains(xs[i+1:], x) {
			return true
		}
	}
	return false
}

// poolOptionsSQL stores the items of the trials of arm $2's pool: trial i
// (from 1) is (anchor $3[i]; $4[i], $5[i]) and shows the $7 items
// $6[(i-1)·$7 + 1 .. i·$7].
const poolOptionsSQL = `
	UPDATE design_pool p SET options = ($6::int[])[((u.i::int - 1) * $7::int + 1):(u.i::int * $7::int)]
	FROM unnest($3::int[], $4::int[], $5::int[]) WITH ORDINALITY AS u(a, j, k, i)
	WHERE p.study_id = $1 AND p.arm = $2 AND p.anchor = u.a AND p.j = u.j AND p.k = u.k`

// poolOptionsArgs are poolOptionsSQL's arguments for qs and their items.
func poolOptionsArgs(key armKey, qs []active.Question, options [][]int) []any {
	as, js, ks := make([]int32, len(qs)), make([]int32, len(qs)), make([]int32, len(qs))
	flat := make([]int32, 0, len(qs)*len(options[0]))
	for i, q := range qs {
		as[i], js[i], ks[i] = int32(q.Key.Anchor), int32(q.Key.J), int32(q.Key.K)
		for _, o := range options[i] {
			flat = append(flat, int32(o))
		}
	}
	return []any{key.study, key.arm, as, js, ks, flat, len(options[0])}
}

// applyPool is ApplyActivePool's transaction (and ApplyTrialPool's, with
// the trials' items: options, nil for triplets).
func (ds *DesignScheduler) applyPool(ctx context.Context, key armKey, qs []active.Question, options [][]int) error {
	ds.stats.steps.Add(1)
	tx, err := ds.db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	row, e, unlock, err := ds.lockState(ctx, tx, key)
	if errors.Is(err, errNoState) {
		return study.Errorf(study.KindNotFound, "arm %d of study %d has no design state yet (no question was issued)", key.arm, key.study)
	}
	if err != nil {
		return err
	}
	unlockOnce := sync.OnceFunc(unlock)
	defer unlockOnce()
	// From here the cached state runs ahead of the database until the
	// commit; on any failure it is dropped and the next writer reloads.
	fail := func(err error) error {
		e.d, e.pool = nil, nil
		return err
	}
	entries, err := readInbox(ctx, tx, key, math.MaxInt32)
	if err != nil {
		return fail(err)
	}
	if len(entries) > 0 {
		if row, err = ds.record(ctx, tx, key, row, e, entries); err != nil {
			return fail(err)
		}
	}
	d, ok := e.d.(*active.Design)
	if !ok {
		return fail(fmt.Errorf("the design state is %T, not the active design's", e.d))
	}
	if err := d.ApplyPool(qs); err != nil {
		return fail(err)
	}
	rev := secret.NewID()
	prog, err := json.Marshal(progressOf(d))
	if err != nil {
		return fail(err)
	}
	snap, err := d.MarshalState()
	if err != nil {
		return fail(fmt.Errorf("snapshot: %w", err))
	}
	write, drop := ds.poolChanges(e, nil)
	b := &pgx.Batch{}
	b.Queue(saveSnapshotSQL, key.study, row.version, rev, prog, snap, key.arm)
	if len(write) > 0 {
		b.Queue(poolWriteSQL, ds.poolWriteArgs(key, write)...)
	}
	if len(drop) > 0 {
		b.Queue(poolDropSQL, poolDropArgs(key, drop)...)
	}
	if len(options) > 0 {
		b.Queue(poolOptionsSQL, poolOptionsArgs(key, qs, options)...)
	}
	deleted := map[triplet.Key]bool{}
	br := tx.SendBatch(ctx, b)
	err = func() error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		if len(write) > 0 {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		if len(drop) > 0 {
			if err := scanKeys(br, func(k triplet.Key) { deleted[k] = true }); err != nil {
				return err
			}
		}
		if len(options) > 0 {
			_, err := br.Exec()
			return err
		}
		return nil
	}()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fail(err)
	}
	e.notePool(write, deleted)
	e.rev, e.whole = rev, true
	warmed := d.WarmedUp()
	unlockOnce()
	ds.clearFull(key) // a new pool: free slots
	if warmed {
		ds.noteWarming(key, false)
	}
	// Outside the arm's lock: fresh statistics for a pool table that just
	// grew by much (see analyzeIfGrown). The pool is installed whatever
	// happens to this; autovacuum analyzes the table later anyway.
	_ = analyzeIfGrown(ctx, ds.db, "design_pool", len(write))
	return nil
}

// analyzeIfGrown analyzes table (design_pool, design_leases) when
// `written` rows are many against what its statistics know (none yet, or more than a tenth of the rows
// they counted, autovacuum's own rule with its default settings, which it
// applies only within a minute). Without statistics PostgreSQL estimates
// one row for an arm's pool, and the claim statement then updates its row
// by walking the whole pool of the arm instead of looking it up by key:
// 12 ms a question with a fresh pool of 20,000 (BenchmarkActiveServing).
func analyzeIfGrown(ctx context.Context, db *pgxpool.Pool, table string, written int) error {
	if written < 100 {
		return nil
	}
	var tuples float64
	if err := db.QueryRow(ctx, `SELECT reltuples FROM pg_class WHERE oid = $1::regclass`, table).Scan(&tuples); err != nil {
		return err
	}
	if tuples >= 0 && float64(written) <= 50+0.1*tuples {
		return nil
	}
	_, err := db.Exec(ctx, `ANALYZE `+pgx.Identifier{table}.Sanitize())
	return err
}
