package studyfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/closer-lab/closer/internal/csvlimit"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/trial"
	"github.com/closer-lab/closer/internal/triplet"
)

// TrialsInput is an odd-one-out or rank trial file to import as a new
// study (issue 27): header item1,item2,item3,odd or
// query,option1,…,optionN,choice1,…,choiceK (internal/trial's files).
type TrialsInput struct {
	Slug  string
	Title string
	CSV   io.Reader
}

// ImportTrials creates a draft study of the file's format whose items
// are the file's item ids (labels without images, numbered as the trial
// readers number them) and whose answers are its trials, one participant
// ("imported") answering them all, in one transaction. Each trial is one
// question (its items in the file's order) and one answer (its choices);
// the votes count the triplets every trial derives. A bad row is a
// KindInvalid error naming its line; nothing is stored.
func ImportTrials(ctx context.Context, db Store, in TrialsInput) (study.Study, Report, error) {
	fail := func(err error) (study.Study, Report, error) {
		return study.Study{}, Report{}, fmt.Errorf("import trials: %w", err)
	}
	kind, r, err := trial.Sniff(in.CSV)
	if err != nil {
		return fail(invalid("%v", err))
	}
	var (
		ids     []string
		answers []study.ImportAnswer
		format  string
	)
	opt := trial.ReadOptions{MaxRows: MaxImportTriplets}
	now := time.Now().UTC()
	// answer adds a trial: its key (anchor, left, right), its items shown
	// and chosen, and its first derived triplet (anchor is its anchor).
	answer := func(anchor, left, right int, options, choices []int, derived triplet.Triplet) {
		// A microsecond apart, so that the exports keep the file's order.
		at := now.Add(time.Duration(len(answers)) * time.Microsecond)
		answers = append(answers, study.ImportAnswer{Line: len(answers) + 2, Participant: "imported",
			Anchor: anchor, Left: left, Right: right, Closer: derived.Closer, Farther: derived.Farther,
			Design: DesignImport, AskedAt: at, AnsweredAt: at, Options: options, Choices: choices})
	}
	switch kind.Format {
	case trial.FormatOddOneOut:
		set, err := trial.ReadOddOneOut(r, opt)
		if err != nil {
			return fail(readErr(err))
		}
		ids, format = set.IDs, string(trial.FormatOddOneOut)
		for _, t := range set.Trials {
			it := t.Items
			d := t.Triplets(nil)[0]
			// The question's key (anchor, left, right) is the first
			// derived triplet's, as the answer's.
			answer(d.Anchor, d.Closer, d.Farther, it[:], []int{t.Odd}, d)
		}
	case trial.FormatRank:
		set, err := trial.ReadRank(r, opt)
		if err != nil {
			return fail(readErr(err))
		}
		ids, format = set.IDs, set.Spec.String()
		for _, t := range set.Trials {
			answer(t.Query, t.Options[0], t.Options[1], t.Options, t.Choices, t.Triplets(nil)[0])
		}
	default:
		return fail(invalid("a %s file: import it as a triplet CSV", kind))
	}
	if len(ids) > MaxImportItems {
		return fail(invalid("more than %d distinct items (the limit)", MaxImportItems))
	}
	if len(answers) == 0 {
		return fail(invalid("the file has no trials"))
	}
	var st study.Study
	rep := Report{Items: len(ids), Participants: 1}
	err = db.ImportStudy(ctx, func(imp study.ImportWriter) error {
		var err error
		st, err = imp.CreateStudy(study.StudyInput{Slug: in.Slug, Title: in.Title, QuestionsPerParticipant: min(len(answers), 100000),
			Status: study.StatusDraft, Design: study.DesignRandom, Format: format,
			Instructions: "Imported from a " + string(kind.Format) + " trial file: items have labels and no images."})
		if err != nil {
			return err
		}
		if _, err := imp.CopyItems(&sliceRows[study.ImportItem]{n: len(ids), row: func(i int) study.ImportItem {
			return study.ImportItem{Index: i, Label: ids[i], FileName: ids[i], SHA256: fmt.Sprintf("label-%d", i)}
		}}); err != nil {
			return err
		}
		if _, err := imp.CopyParticipants(&sliceRows[study.ImportParticipant]{n: 1, row: func(int) study.ImportParticipant {
			return study.ImportParticipant{Key: "imported", ExternalID: "imported", CreatedAt: now}
		}}); err != nil {
			return err
		}
		rep.Answers, err = imp.CopyAnswers(&sliceRows[study.ImportAnswer]{n: len(answers), row: func(i int) study.ImportAnswer { return answers[i] }})
		return answersErr("the file", err)
	})
	if err != nil {
		return fail(err)
	}
	return st, rep, nil
}

// ImportTrialsOrTriplets imports in.CSV with ImportTrials when its header
// is an odd-one-out or rank file's (trial.Sniff), else with
// ImportTriplets.
func ImportTrialsOrTriplets(ctx context.Context, db Store, in TripletsInput) (study.Study, Report, error) {
	kind, _, err := trial.Sniff(in.CSV)
	if _, serr := in.CSV.Seek(0, io.SeekStart); serr != nil {
		return study.Study{}, Report{}, fmt.Errorf("import: read the file again: %w", serr)
	}
	if err == nil && kind.Format != trial.FormatTriplet {
		return ImportTrials(ctx, db, TrialsInput{Slug: in.Slug, Title: in.Title, CSV: in.CSV})
	}
	return ImportTriplets(ctx, db, in)
}

// readErr makes a trial reader's refusal of the file (bad rows, too many
// rows) a user error; other errors pass.
func readErr(err error) error {
	var bad *triplet.CSVError
	var limit *csvlimit.LimitError
	if errors.As(err, &bad) || errors.As(err, &limit) {
		return invalid("%v", err)
	}
	return err
}
