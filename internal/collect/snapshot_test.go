package collect_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/demo"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/study"
)

// TestExportSnapshotIsOneMoment: what is written while a snapshot is open
// (new dashboard settings, a new participant, a new answer, all committed
// through the store's pool) is not in it; the snapshot's settings,
// participants, answers and items are those of the moment it began. The
// same reads after it see the writes, so they did land.
func TestExportSnapshotIsOneMoment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "snap", Title: "Snap", QuestionsPerParticipant: 5, Status: study.StatusOpen})
	if err != nil {
		t.Fatal(err)
	}
	imgs := demo.Items()[:4]
	if _, rej, err := s.AddItems(ctx, st.ID, imgs); err != nil || len(rej) > 0 {
		t.Fatalf("add items: %v %v", rej, err)
	}
	before := study.RecomputeSettings{MinNewAnswers: 30, MaxAge: time.Hour, Method: "ste", Dim: 3, Clusters: 2}
	after := study.RecomputeSettings{MinNewAnswers: 70, MaxAge: 2 * time.Hour, Method: "gnmds", Dim: 2, Clusters: 5}
	if err := s.SetRecomputeSettings(ctx, st.ID, before); err != nil {
		t.Fatal(err)
	}
	answer := func(participantID int64) {
		t.Helper()
		pr, err := s.Next(ctx, participantID)
		if err != nil || pr.Question == nil {
			t.Fatalf("next: %+v %v", pr, err)
		}
		if _, err := s.Answer(ctx, participantID, study.AnswerInput{QuestionID: pr.Question.ID, Closer: pr.Question.Options[0].Index}); err != nil {
			t.Fatal(err)
		}
	}
	p1, _, err := s.CreateParticipant(ctx, st.ID, "first", nil)
	if err != nil {
		t.Fatal(err)
	}
	answer(p1.ID)

	type seen struct {
		settings     study.RecomputeSettings
		participants []string // external ids
		answers      int
		items        int
	}
	read := func(sn study.SnapshotReader) seen {
		t.Helper()
		var v seen
		var err error
		if v.settings, err = sn.Settings(); err != nil {
			t.Fatal(err)
		}
		if err := sn.Participants(func(p study.SnapshotParticipant) error {
			v.participants = append(v.participants, p.ExternalID)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := sn.Answers(func(a study.SnapshotAnswer) error {
			v.answers++
			if a.Participant != p1.PublicID {
				t.Errorf("answer of %q, want %q", a.Participant, p1.PublicID)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := sn.Items(func(it study.SnapshotItem) error {
			if it.Index != v.items || !bytes.Equal(it.Data, imgs[it.Index].Data) {
				t.Errorf("item %d at position %d, or its image differs from the one added", it.Index, v.items)
			}
			v.items++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return v
	}

	var during seen
	if err := s.ExportSnapshot(ctx, st.ID, func(sn study.SnapshotReader) error {
		if sn.Study().ID != st.ID || sn.Study().Slug != "snap" {
			t.Errorf("snapshot of %+v", sn.Study())
		}
		// Written meanwhile, each committed on its own.
		if err := s.SetRecomputeSettings(ctx, st.ID, after); err != nil {
			t.Fatal(err)
		}
		answer(p1.ID)
		if _, _, err := s.CreateParticipant(ctx, st.ID, "second", nil); err != nil {
			t.Fatal(err)
		}
		during = read(sn)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if during.settings != before || len(during.participants) != 1 || during.participants[0] != "first" || during.answers != 1 || during.items != 4 {
		t.Errorf("the snapshot saw %+v, want the settings %+v, participant first, 1 answer, 4 items", during, before)
	}

	var later seen
	if err := s.ExportSnapshot(ctx, st.ID, func(sn study.SnapshotReader) error {
		later = read(sn)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if later.settings != after || len(later.participants) != 2 || later.answers != 2 {
		t.Errorf("a later snapshot saw %+v, want the settings %+v, 2 participants and 2 answers", later, after)
	}
}

// TestExportSnapshotErrors: no study is KindNotFound without calling f, and
// f's error ends the snapshot and is returned.
func TestExportSnapshotErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	called := false
	err := s.ExportSnapshot(ctx, 12345, func(study.SnapshotReader) error { called = true; return nil })
	if collect.KindOf(err) != study.KindNotFound || called {
		t.Errorf("no study: %v (f called: %v), want not found without f", err, called)
	}
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "snap", Title: "Snap", QuestionsPerParticipant: 5})
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	if err := s.ExportSnapshot(ctx, st.ID, func(study.SnapshotReader) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("f's error came back as %v", err)
	}
}
