package purge

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/closer-lab/closer/internal/jobqueue"
	"github.com/closer-lab/closer/internal/store"
)

// RetentionArgs is the periodic job that blanks the identifying fields
// (external ids, platform parameters) of the participants of studies
// closed longer than their retention setting (issue 30).
type RetentionArgs struct{}

// Kind implements river.JobArgs.
func (RetentionArgs) Kind() string { return "identifier_retention" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (RetentionArgs) InsertOpts() river.InsertOpts { return jobqueue.ScanOpts(Queue) }

// Retention blanks what is due and returns how many participants it changed.
func Retention(ctx context.Context, db *store.Store) (int64, error) {
	return db.BlankExpiredIdentifiers(ctx, DefaultBatchRows)
}

type retentionWorker struct {
	river.WorkerDefaults[RetentionArgs]
	db  *store.Store
	log *slog.Logger
}

func (w *retentionWorker) Work(ctx context.Context, _ *river.Job[RetentionArgs]) error {
	n, err := Retention(ctx, w.db)
	if n > 0 {
		w.log.Info("blanked identifying fields past their study's retention", "participants", n)
	}
	return err
}

// retentionEvery is how often the retention job runs: a field is blanked
// within this long of its day.
const retentionEvery = time.Hour
