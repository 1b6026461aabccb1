package collect

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Question is a comparison issued to one participant.
type Question struct {
	ID            string
	StudyID       int64
	ParticipantID int64
	Anchor        ItemRef
	Left          ItemRef
	Right         ItemRef
	Design        string
	IssuedAt      time.Time
}

// Progress is a participant's position in a study: their open question, or
// Done with the completion code once they answered all they will be asked.
type Progress struct {
	Question       *Question
	Answered       int
	Total          int
	Done           bool
	CompletionCode string
}

// The SQL of Next, by name so that TestHotQueryPlans explains these very
// strings on a large study.
const (
	// lockParticipantSQL locks the participant's row and reads their study.
	lockParticipantSQL = `
		SELECT s.id, s.slug, s.title, s.instructions, s.debrief, s.questions_per_participant,
			s.status, s.design, s.created_at, s.updated_at
		FROM participants p JOIN studies s ON s.id = p.study_id
		WHERE p.id = $1 FOR UPDATE OF p`
	participantProgressSQL = `
		SELECT (SELECT count(*) FROM answers WHERE participant_id = $1),
			(SELECT completion_code FROM participants WHERE id = $1)`
	countItemsSQL     = `SELECT count(*) FROM items WHERE study_id = $1`
	insertQuestionSQL = `
		INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`
	openQuestionSQL = `
		SELECT q.id, q.study_id, q.design, q.issued_at,
			q.anchor, a.label, a.sha256, q.left_idx, l.label, l.sha256, q.right_idx, r.label, r.sha256
		FROM questions q
		JOIN items a ON a.study_id = q.study_id AND a.idx = q.anchor
		JOIN items l ON l.study_id = q.study_id AND l.idx = q.left_idx
		JOIN items r ON r.study_id = q.study_id AND r.idx = q.right_idx
		WHERE q.participant_id = $1 AND q.answered_at IS NULL`
)

// Next returns the participant's open question, issuing one when they have
// none. Asking again before answering returns the same question: the
// participant's row is locked for the transaction and a partial unique index
// keeps at most one open question per participant. The comparison comes
// from the study's design. When the participant has answered
// questions_per_participant questions, or the design has nothing left for
// them, they are marked complete and receive a completion code.
func (s *Store) Next(ctx context.Context, participantID int64) (Progress, error) {
	var pr Progress
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		pr = Progress{}
		st, err := scanStudy(tx.QueryRow(ctx, lockParticipantSQL, participantID))
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("participant")
		}
		if err != nil {
			return err
		}
		pr.Total = st.QuestionsPerParticipant
		var code *string
		if err := tx.QueryRow(ctx, participantProgressSQL, participantID).Scan(&pr.Answered, &code); err != nil {
			return err
		}
		if code != nil {
			pr.Done, pr.CompletionCode = true, *code
			return nil
		}
		if st.Status != StatusOpen {
			return userErr(KindNotOpen, "the study is %s", st.Status)
		}
		q, err := openQuestion(ctx, tx, participantID)
		if err != nil {
			return err
		}
		if q != nil {
			pr.Question = q
			return nil
		}
		if pr.Answered >= pr.Total {
			return s.complete(ctx, tx, participantID, &pr)
		}
		sch, ok := s.schedulers[st.Design]
		if !ok {
			return fmt.Errorf("study %s has unknown design %q", st.Slug, st.Design)
		}
		var n int
		if err := tx.QueryRow(ctx, countItemsSQL, st.ID).Scan(&n); err != nil {
			return err
		}
		if n < 3 {
			return userErr(KindNotOpen, "the study has fewer than three items")
		}
		c, err := sch.Next(ctx, tx, Ask{Study: st, ParticipantID: participantID, Items: n})
		if errors.Is(err, ErrExhausted) {
			return s.complete(ctx, tx, participantID, &pr)
		}
		if err != nil {
			return err
		}
		if c.Anchor == c.Left || c.Anchor == c.Right || c.Left == c.Right ||
			min(c.Anchor, c.Left, c.Right) < 0 || max(c.Anchor, c.Left, c.Right) >= n {
			return fmt.Errorf("design %s returned an invalid comparison %+v for %d items", st.Design, c, n)
		}
		id := newID()
		designName := st.Design
		if c.Design != "" {
			designName = c.Design
		}
		if _, err := tx.Exec(ctx, insertQuestionSQL,
			id, st.ID, participantID, c.Anchor, c.Left, c.Right, designName); err != nil {
			return err
		}
		q, err = openQuestion(ctx, tx, participantID)
		if err != nil {
			return err
		}
		if q == nil {
			return fmt.Errorf("question %s vanished", id)
		}
		pr.Question = q
		return nil
	})
	if err != nil {
		return Progress{}, fmt.Errorf("next question: %w", err)
	}
	return pr, nil
}

// complete marks a participant done with their completion code.
func (s *Store) complete(ctx context.Context, tx pgx.Tx, participantID int64, pr *Progress) error {
	code, err := completeParticipant(ctx, tx, participantID)
	if err != nil {
		return err
	}
	pr.Done, pr.CompletionCode = true, code
	return nil
}

// openQuestion returns the participant's unanswered question, or nil.
func openQuestion(ctx context.Context, tx pgx.Tx, participantID int64) (*Question, error) {
	q := Question{ParticipantID: participantID}
	err := tx.QueryRow(ctx, openQuestionSQL, participantID).
		Scan(&q.ID, &q.StudyID, &q.Design, &q.IssuedAt,
			&q.Anchor.Index, &q.Anchor.Label, &q.Anchor.SHA256,
			&q.Left.Index, &q.Left.Label, &q.Left.SHA256,
			&q.Right.Index, &q.Right.Label, &q.Right.SHA256)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &q, nil
}
