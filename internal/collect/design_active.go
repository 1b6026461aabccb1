package collect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
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
		err := tx.QueryRow(ctx, `SELECT design, design_config, arms FROM studies WHERE id = $1 AND deleted_at IS NULL`, studyID).
			Scan(&st.Design, &raw, &st.Arms)
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
			aa := ActiveArm{Arm: i, Name: a.Name, Config: a.Config}
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
	if err := ds.applyPool(ctx, armKey{studyID, arm}, qs); err != nil {
		return fmt.Errorf("apply active pool: %w", err)
	}
	return nil
}

// applyPool is ApplyActivePool's transaction.
func (ds *DesignScheduler) applyPool(ctx context.Context, key armKey, qs []active.Question) error {
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
			return scanKeys(br, func(k triplet.Key) { deleted[k] = true })
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
