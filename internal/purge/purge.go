// Package purge deletes the rows of studies marked deleted, in the
// background (issue 11). A delete request only marks the study
// (collect.Store.MarkStudyDeleted: hidden, closed, slug freed) and enqueues
// a purge job; the job, run by a worker replica's River client, deletes
// the study's rows table by table in batches, each batch a short
// transaction of its own, and the study's row last. No transaction holds
// locks for long, and a purge that stops half way (a crash, a deploy, a
// timeout) resumes where it stopped when the job is retried. A periodic
// scan enqueues a purge for every marked study, so a mark whose job was
// never enqueued or was given up is purged all the same.
package purge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/jobqueue"
	"github.com/closer-lab/closer/internal/store"
	"github.com/closer-lab/closer/internal/study"
)

// Queue is the River queue purge jobs run on.
const Queue = "purge"

// DefaultBatchRows is how many rows one batch deletes (fewer of the tables
// whose rows hold images or results; see collect.PurgeStudyBatch).
const DefaultBatchRows = 10_000

// Args asks for the purge of one study marked deleted. It is unique by
// study until it ends: enqueueing a study whose purge is pending is a
// no-op. A failed attempt is retried (River's backoff); the batches it
// deleted stay deleted.
type Args struct{ jobqueue.Study }

// Kind implements river.JobArgs.
func (Args) Kind() string { return "study_purge" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (Args) InsertOpts() river.InsertOpts {
	return jobqueue.UniqueWhileOpen(Queue, 0)
}

// ScanArgs is the periodic scan that enqueues a purge for every study
// marked deleted.
type ScanArgs struct{}

// Kind implements river.JobArgs.
func (ScanArgs) Kind() string { return "study_purge_scan" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (ScanArgs) InsertOpts() river.InsertOpts { return jobqueue.ScanOpts(Queue) }

// ErrNotMarked is returned for a study that exists and is not marked
// deleted: the purge deletes nothing of it.
var ErrNotMarked = errors.New("the study is not marked deleted")

// Report is what one purge did.
type Report struct {
	Tables       map[string]TableReport // per table, and "studies" for the study's row
	Batches      int                    // DELETE statements, each its own transaction
	Longest      time.Duration          // the longest of them
	LongestTable string
	Duration     time.Duration // the whole purge
	StudyDeleted bool          // this purge deleted the study's row (false: it was gone before)
}

// TableReport is what a purge did in one table.
type TableReport struct {
	Rows    int64
	Batches int
	Time    time.Duration // all its batches
	Longest time.Duration // its longest batch
}

// Study deletes the rows of the study marked deleted, every table in
// collect.PurgeTables' order in batches of batchRows (DefaultBatchRows when
// not positive), then the study's row. A study already gone is done (a
// report of nothing); a study not marked is ErrNotMarked. When ctx ends or
// a batch fails, the batches done stay done and a later call continues.
func Study(ctx context.Context, db *store.Store, studyID int64, batchRows int) (Report, error) {
	if batchRows <= 0 {
		batchRows = DefaultBatchRows
	}
	start := time.Now()
	rep := Report{Tables: map[string]TableReport{}}
	marked, err := db.StudyMarkedDeleted(ctx, studyID)
	if collect.KindOf(err) == study.KindNotFound {
		return rep, nil
	}
	if err != nil {
		return rep, fmt.Errorf("purge study %d: %w", studyID, err)
	}
	if !marked {
		return rep, fmt.Errorf("purge study %d: %w", studyID, ErrNotMarked)
	}
	for _, table := range store.PurgeTables() {
		for empty := false; !empty; {
			t0 := time.Now()
			var n int64
			n, empty, err = db.PurgeStudyBatch(ctx, studyID, table, batchRows)
			if err != nil {
				return rep, fmt.Errorf("purge study %d: %w", studyID, err)
			}
			rep.note(table, n, time.Since(t0))
		}
	}
	t0 := time.Now()
	if rep.StudyDeleted, err = db.DeletePurgedStudy(ctx, studyID); err != nil {
		return rep, fmt.Errorf("purge study %d: %w", studyID, err)
	}
	var rows int64
	if rep.StudyDeleted {
		rows = 1
	}
	rep.note("studies", rows, time.Since(t0))
	rep.Duration = time.Since(start)
	return rep, nil
}

func (r *Report) note(table string, rows int64, took time.Duration) {
	t := r.Tables[table]
	t.Rows += rows
	t.Batches++
	t.Time += took
	t.Longest = max(t.Longest, took)
	r.Tables[table] = t
	r.Batches++
	if took > r.Longest {
		r.Longest, r.LongestTable = took, table
	}
}

// Rows returns the rows deleted per table.
func (r Report) Rows() map[string]int64 {
	out := map[string]int64{}
	for name, t := range r.Tables {
		out[name] = t.Rows
	}
	return out
}

// Config sets up the purge jobs of a worker replica.
type Config struct {
	BatchRows int           // rows per batch (default DefaultBatchRows)
	ScanEvery time.Duration // period of the scan for marked studies (default 1 min)
	Timeout   time.Duration // bound of one attempt, which a retry continues (default 30 min)
}

// Register returns what adds the purge worker, its queue, its periodic
// scan and the periodic retention job (retention.go) to a River client that runs workers (recompute.Config.Register).
func Register(db *store.Store, cfg Config, log *slog.Logger) func(*river.Workers, *river.Config) {
	if cfg.ScanEvery <= 0 {
		cfg.ScanEvery = time.Minute
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Minute
	}
	return func(workers *river.Workers, rc *river.Config) {
		river.AddWorker(workers, &worker{db: db, cfg: cfg, log: log})
		river.AddWorker(workers, &scanWorker{db: db})
		river.AddWorker(workers, &retentionWorker{db: db, log: log})
		if rc.Queues == nil {
			rc.Queues = map[string]river.QueueConfig{}
		}
		// One purge at a time per replica (they are I/O for the database,
		// not work to spread), and the scan beside it.
		rc.Queues[Queue] = river.QueueConfig{MaxWorkers: 2}
		rc.PeriodicJobs = append(rc.PeriodicJobs, jobqueue.Scan(cfg.ScanEvery, ScanArgs{}),
			jobqueue.Scan(retentionEvery, RetentionArgs{}))
	}
}

type worker struct {
	river.WorkerDefaults[Args]
	db  *store.Store
	cfg Config
	log *slog.Logger
}

// Timeout bounds one attempt (River cancels its context after it).
func (w *worker) Timeout(*river.Job[Args]) time.Duration { return w.cfg.Timeout }

func (w *worker) Work(ctx context.Context, job *river.Job[Args]) error {
	rep, err := Study(ctx, w.db, job.Args.StudyID, w.cfg.BatchRows)
	if errors.Is(err, ErrNotMarked) {
		w.log.Error("purge refused", "study", job.Args.StudyID, "err", err)
		return river.JobCancel(err)
	}
	if err != nil {
		w.log.Warn("purge stopped; a retry continues it", "study", job.Args.StudyID, "attempt", job.Attempt,
			"batches", rep.Batches, "err", err)
		return err
	}
	w.log.Info("purged a deleted study", "study", job.Args.StudyID, "deleted", rep.StudyDeleted,
		"rows", rep.Rows(), "batches", rep.Batches, "longest_batch", rep.Longest, "longest_table", rep.LongestTable,
		"duration", rep.Duration)
	return nil
}

type scanWorker struct {
	river.WorkerDefaults[ScanArgs]
	db *store.Store
}

func (w *scanWorker) Work(ctx context.Context, job *river.Job[ScanArgs]) error {
	ids, err := w.db.StudiesToPurge(ctx)
	if err != nil {
		return err
	}
	client := river.ClientFromContext[pgx.Tx](ctx)
	for _, id := range ids {
		if _, err := client.Insert(ctx, Args{jobqueue.Study{StudyID: id}}, nil); err != nil {
			return fmt.Errorf("enqueue purge: %w", err)
		}
	}
	return nil
}

// Inserter enqueues jobs (*recompute.Jobs, whose River client every role
// has).
type Inserter interface {
	Insert(ctx context.Context, args river.JobArgs) (*rivertype.JobInsertResult, error)
}

// Enqueuer enqueues purges; any replica may (a worker replica runs them).
type Enqueuer struct{ jobs Inserter }

// NewEnqueuer returns an Enqueuer that inserts with jobs.
func NewEnqueuer(jobs Inserter) *Enqueuer { return &Enqueuer{jobs: jobs} }

// Enqueue asks for the purge of a study marked deleted (a no-op when its
// purge is pending already).
func (e *Enqueuer) Enqueue(ctx context.Context, studyID int64) error {
	if _, err := e.jobs.Insert(ctx, Args{jobqueue.Study{StudyID: studyID}}); err != nil {
		return fmt.Errorf("enqueue purge: %w", err)
	}
	return nil
}
