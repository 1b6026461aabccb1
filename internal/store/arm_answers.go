package store

import (
	"context"
)

// armAnswersSQL counts, per arm of study $1, the answers of its
// participants who are neither excluded nor previews (the answers a
// recompute fits and judges): those to held-out questions apart.
const armAnswersSQL = `
	SELECT p.arm, count(*) FILTER (WHERE q.design <> 'heldout'), count(*) FILTER (WHERE q.design = 'heldout')
	FROM answers a JOIN participants p ON p.id = a.participant_id JOIN questions q ON q.id = a.question_id
	WHERE a.study_id = $1 AND p.excluded_at IS NULL AND NOT p.preview
	GROUP BY p.arm`

// ArmAnswers is one arm's answers as a recompute counts them: excluded
// participants and previews left out, held-out answers apart.
type ArmAnswers struct {
	Answers, Heldout int
}

// ArmAnswerCounts returns the answers of each of a study's arms arms (in
// arm order; 1 for a study without arms) as a recompute counts them: the
// answers of excluded participants and of previews left out, so that the
// "Designs compared" table counts what the curve and the errors count.
func (s *Store) ArmAnswerCounts(ctx context.Context, studyID int64, arms int) (_ []ArmAnswers, err error) {
	defer wrap(&err, "store.ArmAnswerCounts(%d)", studyID)
	out := make([]ArmAnswers, max(arms, 1))
	rows, err := s.pool.Query(ctx, armAnswersSQL, studyID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var arm, answers, heldout int
		if err := rows.Scan(&arm, &answers, &heldout); err != nil {
			return nil, err
		}
		if arm >= 0 && arm < len(out) {
			out[arm] = ArmAnswers{Answers: answers, Heldout: heldout}
		}
	}
	return out, rows.Err()
}
