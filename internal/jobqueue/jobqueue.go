// Package jobqueue holds what closer's background jobs (internal/recompute,
// internal/purge) share on River: the states of a job that has not ended,
// uniqueness per study while a job is open, the periodic scan that finds
// work, and the lookup of a study's open job. Each job package keeps its
// own work; this package keeps River's conventions in one place.
package jobqueue

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// OpenStates returns the states of a job that is queued or running: it has
// not completed, been cancelled or been discarded. A new slice each call.
func OpenStates() []rivertype.JobState {
	return []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
		rivertype.JobStateRetryable, rivertype.JobStateScheduled,
	}
}

// UniqueWhileOpen returns insert options on queue for a job that is unique
// by its arguments (a study) while it is open: inserting it again then adds
// nothing. maxAttempts 0 keeps River's default retries.
func UniqueWhileOpen(queue string, maxAttempts int) river.InsertOpts {
	return river.InsertOpts{
		Queue:       queue,
		MaxAttempts: maxAttempts,
		UniqueOpts:  river.UniqueOpts{ByArgs: true, ByState: OpenStates()},
	}
}

// Study is the argument of a job about one study, embedded in each job's
// Args: it encodes as {"study_id": N}, what OpenJob looks up.
type Study struct {
	StudyID int64 `json:"study_id"`
}

// ScanOpts returns the insert options of a periodic scan on queue: one
// attempt (the next period scans again).
func ScanOpts(queue string) river.InsertOpts {
	return river.InsertOpts{Queue: queue, MaxAttempts: 1}
}

// Scan returns a periodic job inserting args every period, first when the
// client starts. River runs periodic jobs on the elected leader only, so
// several worker replicas scan once per period.
func Scan(every time.Duration, args river.JobArgs) *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(every),
		func() (river.JobArgs, *river.InsertOpts) { return args, nil },
		&river.PeriodicJobOpts{RunOnStart: true})
}

// OpenJob returns the newest open job of kind whose arguments name the
// study (`{"study_id": N}`), or nil when it has none.
func OpenJob(ctx context.Context, client *river.Client[pgx.Tx], kind string, studyID int64) (*rivertype.JobRow, error) {
	res, err := client.JobList(ctx, river.NewJobListParams().
		Kinds(kind).
		States(OpenStates()...).
		Where("(args->>'study_id')::bigint = @study_id", river.NamedArgs{"study_id": studyID}).
		OrderBy(river.JobListOrderByID, river.SortOrderDesc).
		First(1))
	if err != nil {
		return nil, fmt.Errorf("open %s job of study %s: %w", kind, strconv.FormatInt(studyID, 10), err)
	}
	if len(res.Jobs) == 0 {
		return nil, nil
	}
	return res.Jobs[0], nil
}
