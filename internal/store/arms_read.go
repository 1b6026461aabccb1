package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// QuestionsIssued reports whether the study issued any question: its
// design, the design's settings, its arms and its held-out share are then
// frozen (UpdateStudy refuses to change them), which the study form says.
func (s *Store) QuestionsIssued(ctx context.Context, studyID int64) (bool, error) {
	var asked bool
	if err := s.pool.QueryRow(ctx, questionsIssuedSQL, studyID).Scan(&asked); err != nil {
		return false, fmt.Errorf("questions issued: %w", err)
	}
	return asked, nil
}

// ArmParticipants returns how many participants each arm of a study with
// arms was assigned (arm_counts, in arm order; those who joined and were
// assigned again before the first question count once, in their arm); nil
// for a study without arms.
func (s *Store) ArmParticipants(ctx context.Context, studyID int64) ([]int, error) {
	var counts []int32
	err := s.pool.QueryRow(ctx, `SELECT counts FROM arm_counts WHERE study_id = $1`, studyID).Scan(&counts)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("arm participants: %w", err)
	}
	out := make([]int, len(counts))
	for i, c := range counts {
		out[i] = int(c)
	}
	return out, nil
}
