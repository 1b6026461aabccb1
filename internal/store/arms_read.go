package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// QuestionsIssued reports whether the study issued any question: its
// design, the design's settings, its arms and its held-out share are then
// frozen (UpdateStudy refuses to change them), which the study form says.
func (s *Store) QuestionsIssued(ctx context.Context, studyID int64) (_ bool, err error) {
	defer wrap(&err, "store.QuestionsIssued(%d)", studyID)
	var asked bool
	if err := s.pool.QueryRow(ctx, questionsIssuedSQL, studyID).Scan(&asked); err != nil {
		return false, err
	}
	return asked, nil
}

// ArmParticipants returns how many participants each arm of a study with
// arms was assigned (arm_counts, in arm order; those who joined and were
// assigned again before the first question count once, in their arm); nil
// for a study without arms.
func (s *Store) ArmParticipants(ctx context.Context, studyID int64) (_ []int, err error) {
	defer wrap(&err, "store.ArmParticipants(%d)", studyID)
	var counts []int32
	err = s.pool.QueryRow(ctx, `SELECT counts FROM arm_counts WHERE study_id = $1`, studyID).Scan(&counts)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]int, len(counts))
	for i, c := range counts {
		out[i] = int(c)
	}
	return out, nil
}
