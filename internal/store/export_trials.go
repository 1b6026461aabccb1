package store

import (
	"context"
	"errors"
	"io"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/trial"
)

// exportTrialsSQL reads the answered trials of study $1 (not the skips,
// which are in trial_answers) in answer order, those of excluded
// participants only when $2, never a preview session's.
const exportTrialsSQL = `
	SELECT a.anchor, q.options, a.choices
	FROM answers a
	JOIN questions q ON q.id = a.question_id
	JOIN participants p ON p.id = a.participant_id
	WHERE a.study_id = $1 AND a.choices IS NOT NULL AND ($2 OR p.excluded_at IS NULL) AND NOT p.preview
	ORDER BY a.answered_at, a.question_id`

// ExportTrialsCSV writes an odd-one-out or rank study's answered trials to
// w as the format's trial file (issue 27; internal/trial's WriteOddOneOut,
// header item1,item2,item3,odd, and WriteRank, header
// query,option1,…,optionN,choice1,…,choiceK), items named by their index
// as in triplets.csv: the file `closer embed` and `closer eval` read. The
// trials of excluded participants only when includeExcluded; a triplet
// study's answers are triplets.csv (KindInvalid). The trials are read
// in one statement (a consistent snapshot) before the file is written.
func (s *Store) ExportTrialsCSV(ctx context.Context, studyID int64, w io.Writer, includeExcluded bool) (err error) {
	defer wrap(&err, "store.ExportTrialsCSV(%d, %t)", studyID, includeExcluded)
	var format string
	err = s.pool.QueryRow(ctx, `SELECT format FROM studies WHERE id = $1 AND deleted_at IS NULL`, studyID).Scan(&format)
	if errors.Is(err, pgx.ErrNoRows) {
		return study.NotFound("study")
	}
	if err != nil {
		return err
	}
	f := study.MustStudyFormat(format)
	if f.Format == study.FormatTriplet {
		return study.Errorf(study.KindInvalid, "a triplet study's answers are its triplets.csv; trials.csv is an odd-one-out or rank study's")
	}
	rows, err := s.pool.Query(ctx, exportTrialsSQL, studyID, includeExcluded)
	if err != nil {
		return err
	}
	var (
		odd             []trial.OddOneOut
		rank            []trial.Rank
		anchor          int
		options, choice []int
	)
	_, err = pgx.ForEachRow(rows, []any{&anchor, &options, &choice}, func() error {
		switch {
		case f.Format == study.FormatOddOneOut && len(options) == 3 && len(choice) == 1:
			odd = append(odd, trial.OddOneOut{Items: [3]int(options), Odd: choice[0]})
		case f.Format == study.FormatRank && len(options) == f.Rank.N && len(choice) == f.Rank.K:
			rank = append(rank, trial.Rank{Query: anchor, Options: slices.Clone(options), Choices: slices.Clone(choice)})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if f.Format == study.FormatOddOneOut {
		return trial.WriteOddOneOut(w, nil, odd)
	}
	return trial.WriteRank(w, nil, f.Rank, rank)
}
