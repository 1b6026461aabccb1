package recompute

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/jobqueue"
	"github.com/closer-lab/closer/internal/study"
)

// Queue is the River queue recompute jobs run on.
const Queue = "recompute"

// Args asks for one recompute of a study. It is unique by study while
// queued or running: enqueueing a study that has a run pending is a no-op.
type Args struct{ jobqueue.Study }

// Kind implements river.JobArgs.
func (Args) Kind() string { return "recompute" }

// InsertOpts implements river.JobArgsWithInsertOpts: one run per study at a
// time, never retried (the next scan enqueues it again when due).
func (Args) InsertOpts() river.InsertOpts {
	return jobqueue.UniqueWhileOpen(Queue, 1)
}

// ScanArgs is the periodic scan for studies whose recompute is due.
type ScanArgs struct{}

// Kind implements river.JobArgs.
func (ScanArgs) Kind() string { return "recompute_scan" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (ScanArgs) InsertOpts() river.InsertOpts { return jobqueue.ScanOpts(Queue) }

type worker struct {
	river.WorkerDefaults[Args]
	store *collect.Store
	log   *slog.Logger
}

// Timeout bounds one run (River cancels its context after it).
func (w *worker) Timeout(*river.Job[Args]) time.Duration { return 30 * time.Minute }

func (w *worker) Work(ctx context.Context, job *river.Job[Args]) error {
	runID, err := Run(ctx, w.store, job.Args.StudyID, job.ID)
	if runID == 0 && collect.KindOf(err) == study.KindNotFound {
		// Deleted since it was enqueued: nothing to compute, nothing to retry.
		w.log.Info("recompute skipped: the study is deleted", "study", job.Args.StudyID)
		return nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return river.JobCancel(err)
		}
		w.log.Warn("recompute failed", "study", job.Args.StudyID, "run", runID, "err", err)
		return err
	}
	w.log.Info("recomputed", "study", job.Args.StudyID, "run", runID)
	return nil
}

type scanWorker struct {
	river.WorkerDefaults[ScanArgs]
	jobs *Jobs
}

func (w *scanWorker) Work(ctx context.Context, job *river.Job[ScanArgs]) error {
	ids, err := DueStudies(ctx, w.jobs.store)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, _, err := w.jobs.Enqueue(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// DueStudies returns the studies the periodic scan enqueues, in id order:
// those whose recompute is due by their settings (collect.Store.DueStudies:
// min_new_answers new answers, or max_age with any) and those with an
// active arm whose pool runs low (collect.Store.ActivePoolsDue: warm-up
// over and no pool yet, or the pool used up to half), whose run refreshes
// the pool.
func DueStudies(ctx context.Context, store *collect.Store) ([]int64, error) {
	ids, err := store.DueStudies(ctx)
	if err != nil {
		return nil, err
	}
	low, err := store.ActivePoolsDue(ctx)
	if err != nil {
		return nil, err
	}
	ids = append(ids, low...)
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// Config sets up the jobs.
type Config struct {
	// Work runs workers (recompute runs and the periodic scan) in this
	// process; without it the client only enqueues and cancels.
	Work bool
	// Workers is how many runs this process does at once (default 1).
	Workers int
	// ScanEvery is the period of the due-study scan (default 20 s).
	ScanEvery time.Duration
	// Register adds other kinds of jobs (their workers, queues and
	// periodic jobs) to this client when it runs workers, such as
	// internal/purge's: one client per process shares one leader election,
	// which runs the periodic jobs, and one start and stop.
	Register []func(*river.Workers, *river.Config)
}

// Jobs is the River client of the recompute jobs.
type Jobs struct {
	client *river.Client[pgx.Tx]
	store  *collect.Store
	work   bool
}

// New returns the recompute jobs on pool. Call Start to run workers.
func New(pool *pgxpool.Pool, store *collect.Store, cfg Config, log *slog.Logger) (*Jobs, error) {
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	if cfg.ScanEvery <= 0 {
		cfg.ScanEvery = 20 * time.Second
	}
	j := &Jobs{store: store, work: cfg.Work}
	rc := &river.Config{Logger: slog.New(routineToDebug{log.Handler()}).With("component", "river")}
	if cfg.Work {
		workers := river.NewWorkers()
		river.AddWorker(workers, &worker{store: store, log: log})
		river.AddWorker(workers, &scanWorker{jobs: j})
		rc.Workers = workers
		rc.Queues = map[string]river.QueueConfig{Queue: {MaxWorkers: cfg.Workers + 1}} // +1: the scan never waits behind a run
		rc.PeriodicJobs = []*river.PeriodicJob{jobqueue.Scan(cfg.ScanEvery, ScanArgs{})}
		for _, register := range cfg.Register {
			register(workers, rc)
		}
	}
	client, err := river.NewClient(riverpgxv5.New(pool), rc)
	if err != nil {
		return nil, fmt.Errorf("recompute jobs: %w", err)
	}
	j.client = client
	return j, nil
}

// Start runs the workers (a no-op without Config.Work).
func (j *Jobs) Start(ctx context.Context) error {
	if !j.work {
		return nil
	}
	return j.client.Start(ctx)
}

// Stop waits for running jobs to finish (until ctx ends, then cancels them).
func (j *Jobs) Stop(ctx context.Context) error {
	if !j.work {
		return nil
	}
	if err := j.client.Stop(ctx); err != nil {
		return j.client.StopAndCancel(context.WithoutCancel(ctx))
	}
	return nil
}

// Enqueue asks for a recompute of the study. It returns the job's id and
// whether a run was already queued or running (then nothing is added).
func (j *Jobs) Enqueue(ctx context.Context, studyID int64) (int64, bool, error) {
	res, err := j.client.Insert(ctx, Args{jobqueue.Study{StudyID: studyID}}, nil)
	if err != nil {
		return 0, false, fmt.Errorf("enqueue recompute: %w", err)
	}
	return res.Job.ID, res.UniqueSkippedAsDuplicate, nil
}

// Insert enqueues a job of another kind on this client (a purge; the
// worker replicas run it).
func (j *Jobs) Insert(ctx context.Context, args river.JobArgs) (*rivertype.JobInsertResult, error) {
	return j.client.Insert(ctx, args, nil)
}

// ErrNothingToCancel is returned by Cancel when the study has no queued or
// running recompute.
var ErrNothingToCancel = errors.New("no recompute is queued or running")

// Cancel cancels the study's queued or running recompute (a running one
// stops at its next check of the context, within a stage of the embedding).
func (j *Jobs) Cancel(ctx context.Context, studyID int64) error {
	job, err := jobqueue.OpenJob(ctx, j.client, Args{}.Kind(), studyID)
	if err != nil {
		return fmt.Errorf("cancel recompute: %w", err)
	}
	if job == nil {
		return ErrNothingToCancel
	}
	if _, err := j.client.JobCancel(ctx, job.ID); err != nil {
		return fmt.Errorf("cancel recompute: %w", err)
	}
	return nil
}

// Pending returns the state and id of the study's queued or running
// recompute job ("" and 0 when there is none).
func (j *Jobs) Pending(ctx context.Context, studyID int64) (string, int64, error) {
	job, err := jobqueue.OpenJob(ctx, j.client, Args{}.Kind(), studyID)
	if err != nil {
		return "", 0, fmt.Errorf("pending recompute: %w", err)
	}
	if job == nil {
		return "", 0, nil
	}
	return string(job.State), job.ID, nil
}
