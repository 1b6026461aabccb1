package jobqueue_test

import (
	"context"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/closer-lab/closer/internal/jobqueue"
	"github.com/closer-lab/closer/internal/pgtest"
)

type studyArgs struct {
	StudyID int64 `json:"study_id"`
}

func (studyArgs) Kind() string { return "jobqueue_test" }

func (studyArgs) InsertOpts() river.InsertOpts { return jobqueue.UniqueWhileOpen("default", 1) }

type otherArgs struct {
	StudyID int64 `json:"study_id"`
}

func (otherArgs) Kind() string { return "jobqueue_test_other" }

// OpenJob finds the newest open job of its kind for its study only, and
// none once that job has ended; UniqueWhileOpen adds nothing while a job of
// the same study is open, and a new job once it has ended.
func TestOpenJobAndUniqueness(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{}) // insert only: no workers
	if err != nil {
		t.Fatal(err)
	}
	if job, err := jobqueue.OpenJob(ctx, client, studyArgs{}.Kind(), 7); err != nil || job != nil {
		t.Fatalf("before any insert: %v, %v", job, err)
	}
	first, err := client.Insert(ctx, studyArgs{StudyID: 7}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Another study and another kind for the same study: neither is study
	// 7's job of this kind.
	if _, err := client.Insert(ctx, studyArgs{StudyID: 8}, nil); err != nil {
		t.Fatal(err)
	}
	other, err := client.Insert(ctx, otherArgs{StudyID: 7}, nil)
	if err != nil {
		t.Fatal(err)
	}
	again, err := client.Insert(ctx, studyArgs{StudyID: 7}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !again.UniqueSkippedAsDuplicate || again.Job.ID != first.Job.ID {
		t.Fatalf("second insert while open: skipped %v, job %d (want %d)", again.UniqueSkippedAsDuplicate, again.Job.ID, first.Job.ID)
	}
	job, err := jobqueue.OpenJob(ctx, client, studyArgs{}.Kind(), 7)
	if err != nil || job == nil || job.ID != first.Job.ID || job.State != rivertype.JobStateAvailable {
		t.Fatalf("open job: %+v, %v; want job %d available", job, err, first.Job.ID)
	}
	if job, err := jobqueue.OpenJob(ctx, client, otherArgs{}.Kind(), 7); err != nil || job == nil || job.ID != other.Job.ID {
		t.Fatalf("the other kind's job: %+v, %v; want %d", job, err, other.Job.ID)
	}
	if _, err := client.JobCancel(ctx, first.Job.ID); err != nil {
		t.Fatal(err)
	}
	if job, err := jobqueue.OpenJob(ctx, client, studyArgs{}.Kind(), 7); err != nil || job != nil {
		t.Fatalf("after cancelling: %+v, %v; want none", job, err)
	}
	next, err := client.Insert(ctx, studyArgs{StudyID: 7}, nil)
	if err != nil || next.UniqueSkippedAsDuplicate || next.Job.ID == first.Job.ID {
		t.Fatalf("insert after the job ended: %+v, %v", next, err)
	}
	if job, err := jobqueue.OpenJob(ctx, client, studyArgs{}.Kind(), 7); err != nil || job == nil || job.ID != next.Job.ID {
		t.Fatalf("newest open job: %+v, %v; want %d", job, err, next.Job.ID)
	}
}

func TestOpenStatesAreTheUnfinishedOnes(t *testing.T) {
	t.Parallel()
	ended := map[rivertype.JobState]bool{rivertype.JobStateCompleted: true, rivertype.JobStateCancelled: true, rivertype.JobStateDiscarded: true}
	open := map[rivertype.JobState]bool{}
	for _, s := range jobqueue.OpenStates() {
		open[s] = true
	}
	for _, s := range rivertype.JobStates() {
		if open[s] == ended[s] {
			t.Errorf("state %q: open %v, ended %v", s, open[s], ended[s])
		}
	}
}
