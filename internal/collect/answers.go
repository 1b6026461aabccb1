package collect

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/triplet"
)

// MaxResponseMS bounds a reported response time (one day).
const MaxResponseMS = 24 * 60 * 60 * 1000

// AnswerInput is a participant's answer to a question.
type AnswerInput struct {
	QuestionID string
	Closer     int  // the item index chosen as closer to the anchor
	ResponseMS *int // optional: how long the participant took
}

// The SQL of Answer and Votes, by name so that TestHotQueryPlans explains
// these very strings on a large study.
const (
	// lockQuestionSQL locks the question and reads its study.
	lockQuestionSQL = `
		SELECT q.participant_id, q.anchor, q.left_idx, q.right_idx, q.answered_at,
			s.id, s.slug, s.status, s.design, s.questions_per_participant
		FROM questions q JOIN studies s ON s.id = q.study_id
		WHERE q.id = $1 FOR UPDATE OF q`
	previousAnswerSQL = `SELECT closer FROM answers WHERE question_id = $1`
	insertAnswerSQL   = `
		INSERT INTO answers (question_id, study_id, participant_id, anchor, closer, farther, response_ms)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`
	addVoteSQL = `
		INSERT INTO votes (study_id, anchor, j, k, j_closer, k_closer) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (study_id, anchor, j, k) DO UPDATE
		SET j_closer = votes.j_closer + excluded.j_closer, k_closer = votes.k_closer + excluded.k_closer`
	markAnsweredSQL  = `UPDATE questions SET answered_at = now() WHERE id = $1`
	countAnsweredSQL = `SELECT count(*) FROM answers WHERE participant_id = $1`
)

// Answer records a participant's answer. In one transaction it locks the
// question, checks that it was issued to this participant and that Closer is
// one of its two options, stores the answer (one per question), adds the
// vote, marks the question answered and lets the study's design record it;
// the transaction commits before Answer returns. Answering an answered
// question again with the same choice stores nothing and reports
// created=false; with the other choice it is a KindConflict error. A
// question issued to someone else is KindForbidden, an unknown question
// KindNotFound, a choice that is not an option KindInvalid; nothing is
// stored on any error.
func (s *Store) Answer(ctx context.Context, participantID int64, in AnswerInput) (created bool, err error) {
	if in.ResponseMS != nil && (*in.ResponseMS < 0 || *in.ResponseMS > MaxResponseMS) {
		return false, fmt.Errorf("answer: %w", userErr(KindInvalid, "response_ms must be between 0 and %d", MaxResponseMS))
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		created = false
		var owner int64
		var anchor, left, right int
		var answeredAt *time.Time
		var status string
		var st Study
		err := tx.QueryRow(ctx, lockQuestionSQL, in.QuestionID).
			Scan(&owner, &anchor, &left, &right, &answeredAt, &st.ID, &st.Slug, &status, &st.Design, &st.QuestionsPerParticipant)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("question")
		}
		if err != nil {
			return err
		}
		st.Status = status
		if owner != participantID {
			return userErr(KindForbidden, "this question was issued to another participant")
		}
		if in.Closer != left && in.Closer != right {
			return userErr(KindInvalid, "closer must be one of the two options, %d or %d", left, right)
		}
		farther := right
		if in.Closer == right {
			farther = left
		}
		if answeredAt != nil {
			var prev int
			if err := tx.QueryRow(ctx, previousAnswerSQL, in.QuestionID).Scan(&prev); err != nil {
				return err
			}
			if prev != in.Closer {
				return userErr(KindConflict, "this question was already answered with %d", prev)
			}
			return nil // the same answer again: nothing to do
		}
		if status == StatusClosed {
			return userErr(KindNotOpen, "the study is closed")
		}
		if _, err := tx.Exec(ctx, insertAnswerSQL,
			in.QuestionID, st.ID, participantID, anchor, in.Closer, farther, in.ResponseMS); err != nil {
			return err
		}
		t := triplet.Triplet{Anchor: anchor, Closer: in.Closer, Farther: farther}
		k := triplet.KeyOf(t)
		jc, kc := 0, 0
		if in.Closer == k.J {
			jc = 1
		} else {
			kc = 1
		}
		if _, err := tx.Exec(ctx, addVoteSQL,
			st.ID, k.Anchor, k.J, k.K, jc, kc); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, markAnsweredSQL, in.QuestionID); err != nil {
			return err
		}
		sch, ok := s.schedulers[st.Design]
		if !ok {
			return fmt.Errorf("study %s has unknown design %q", st.Slug, st.Design)
		}
		if err := sch.Record(ctx, tx, st, t); err != nil {
			return err
		}
		// The last answer completes the participant at once, so the study's
		// counts are right even if they never ask for the next question.
		var answered int
		if err := tx.QueryRow(ctx, countAnsweredSQL, participantID).Scan(&answered); err != nil {
			return err
		}
		if answered >= st.QuestionsPerParticipant {
			if _, err := completeParticipant(ctx, tx, participantID); err != nil {
				return err
			}
		}
		created = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("answer: %w", err)
	}
	return created, nil
}
