package collect

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/store"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/triplet"
)

// The SQL of Answer, by name so that TestHotQueryPlans explains these very
// strings on a large study.
const (
	// lockAnswerSQL reads the question and its study (with the
	// participant's arm's design) and locks the row of the participant it
	// was issued to; the question is unanswered when the participant holds
	// it.
	lockAnswerSQL = `
		SELECT q.participant_id, q.anchor, q.left_idx, q.right_idx, q.design, q.expected,
			s.id, s.slug, s.status, coalesce(s.arms -> p.arm ->> 'design', s.design), p.arm, s.heldout_share,
			s.questions_per_participant, s.version, s.quality, s.idle_minutes, s.exclusion <> '{}',
			p.open_question IS NOT DISTINCT FROM q.id, p.answered,
			p.ahead_question, a.anchor, a.left_idx, a.right_idx, a.design, a.issued_at
		FROM questions q JOIN participants p ON p.id = q.participant_id JOIN studies s ON s.id = q.study_id
		LEFT JOIN questions a ON a.id = p.ahead_question
		WHERE q.id = $1 FOR UPDATE OF p`
	// previousAnswerSQL reads the answer given to a question: a triplet's
	// closer, or a trial's or skip's (NULL: skipped).
	previousAnswerSQL = `
		SELECT closer FROM answers WHERE question_id = $1
		UNION ALL SELECT closer FROM trial_answers WHERE question_id = $1`
	// insertTrialAnswerSQL stores an answer that is no triplet: to a catch
	// or repeat trial ($5: it chose the expected option), or a skip ($4
	// NULL).
	insertTrialAnswerSQL = `
		INSERT INTO trial_answers (question_id, study_id, participant_id, closer, correct, response_ms)
		VALUES ($1, $2, $3, $4, $5, $6)`
	// releaseSkippedSQL gives a design back the comparison a skipped
	// question of participant $2 held: its lease ends and its pool row's
	// slot is free again (as the writer does for an answered one). Nothing
	// when the lease lapsed and another question took it over.
	releaseSkippedSQL = `
		WITH l AS (
			DELETE FROM design_leases WHERE study_id = $1 AND participant_id = $2 AND anchor = $3 AND j = $4 AND k = $5
			RETURNING arm, anchor, j, k)
		UPDATE design_pool p SET taken = p.taken - 1
		FROM l WHERE p.study_id = $1 AND p.arm = l.arm AND p.anchor = l.anchor AND p.j = l.j AND p.k = l.k`
	participantExistsSQL = `SELECT EXISTS (SELECT 1 FROM participants WHERE id = $1)`
	insertAnswerSQL      = `
		INSERT INTO answers (question_id, study_id, participant_id, anchor, closer, farther, response_ms)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`
	addVoteSQL = `
		INSERT INTO votes (study_id, anchor, j, k, j_closer, k_closer) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (study_id, anchor, j, k) DO UPDATE
		SET j_closer = votes.j_closer + excluded.j_closer, k_closer = votes.k_closer + excluded.k_closer`
	// inboxSQL hands an answer to a design question to the writer of the
	// design of arm $6.
	inboxSQL = `INSERT INTO design_inbox (study_id, participant_id, anchor, closer, farther, arm) VALUES ($1, $2, $3, $4, $5, $6)`
	// answeredSQL counts the answer on the participant, makes them hold
	// their next question: the one they held ahead, if any, and then $2
	// (if it was issued) ahead of it; else $2 as their open question. When
	// it was their last ($3 questions), it gives them a completion code
	// once (the study's code, or $4 if it has none; kept if they hold one).
	answeredSQL = `
		UPDATE participants SET answered = answered + 1, last_active_at = now(),
			open_question = CASE WHEN ahead_question IS NULL THEN (SELECT id FROM questions WHERE id = $2) ELSE ahead_question END,
			ahead_question = CASE WHEN ahead_question IS NULL THEN NULL ELSE (SELECT id FROM questions WHERE id = $2) END,
			completion_code = CASE WHEN answered + 1 >= $3 THEN coalesce(completion_code, ` + studyCodeSQL + `, $4) ELSE completion_code END,
			completed_at = CASE WHEN answered + 1 >= $3 THEN coalesce(completed_at, now()) ELSE completed_at END
		WHERE id = $1 RETURNING answered, completion_code`
)

// Answer records a participant's answer. In one transaction it locks the
// participant the question was issued to, checks that this is them and
// that Closer is one of the question's two options, stores the answer (one
// per question), adds the vote, counts it on the participant (completing
// them with their last) and, for a question of a stateful design, hands it
// to the participant's arm's design; the transaction commits before Answer
// returns (a basis design has recorded it then; the landmark and active
// designs record it in the background, RecordPending waits for them). An
// answer to a held-out question is stored as a triplet but reaches neither
// the votes nor any design. Answering an answered question again with the
// same choice stores nothing and reports created=false; with the other
// choice it is a KindConflict error. A question issued to someone else is
// KindForbidden, an unknown question KindNotFound, a choice that is not an
// option KindInvalid; nothing is stored on any error.
func (s *Store) Answer(ctx context.Context, participantID int64, in study.AnswerInput) (created bool, err error) {
	created, _, err = s.answer(ctx, participantID, in, false)
	if err != nil {
		return false, fmt.Errorf("answer: %w", err)
	}
	return created, nil
}

// AnswerNext is Answer followed by Next in the same transaction: one round
// trip from the annotator's page or client per answer. The progress is the
// participant's after the answer: their next question, or Done with their
// code; with the study no longer open it has neither, and Status says why.
// A repeated answer (created=false) returns the progress as Next would.
func (s *Store) AnswerNext(ctx context.Context, participantID int64, in study.AnswerInput) (created bool, pr study.Progress, err error) {
	created, pr, err = s.answer(ctx, participantID, in, true)
	if err != nil {
		return false, study.Progress{}, fmt.Errorf("answer: %w", err)
	}
	return created, pr, nil
}

func (s *Store) answer(ctx context.Context, participantID int64, in study.AnswerInput, next bool) (created bool, pr study.Progress, err error) {
	if in.ResponseMS != nil && (*in.ResponseMS < 0 || *in.ResponseMS > study.MaxResponseMS) {
		return false, pr, study.Errorf(study.KindInvalid, "response_ms must be between 0 and %d", study.MaxResponseMS)
	}
	var record *DesignScheduler // the design to record the answer in, after the commit
	var (
		owner               int64
		anchor, left, right int
		qDesign             string
		expected            *int
		st                  studyState
		quality             []byte
		open                bool
		answered            int
		hasRules            bool // the study has exclusion rules
		ahead               heldQuestion
	)
	scan := func(r pgx.Row) error {
		err := r.Scan(append([]any{&owner, &anchor, &left, &right, &qDesign, &expected,
			&st.ID, &st.Slug, &st.Status, &st.Design, &st.Arm, &st.HeldoutShare,
			&st.PerParticipant, &st.Version, &quality, &st.IdleMinutes, &hasRules, &open, &answered}, ahead.targets()...)...)
		if errors.Is(err, pgx.ErrNoRows) {
			return study.NotFound("question")
		}
		if err != nil {
			return err
		}
		return st.scanQuality(quality)
	}
	var studyID int64
	var releasesSlot bool // a skip of a design question: its comparison goes back to the design
	err = s.inTxFrom(ctx, lockAnswerSQL, []any{in.QuestionID}, scan, func(tx pgx.Tx) error {
		created, pr, record, releasesSlot = false, study.Progress{}, nil, false
		studyID = st.ID
		if owner != participantID {
			return study.Errorf(study.KindForbidden, "this question was issued to another participant")
		}
		if in.Skip && !st.Quality.CantDecide {
			return study.Errorf(study.KindInvalid, "this study does not offer \"can't decide\"")
		}
		if !in.Skip && in.Closer != left && in.Closer != right {
			return study.Errorf(study.KindInvalid, "closer must be one of the two options, %d or %d", left, right)
		}
		if in.Skip {
			in.Closer = left // the key below is the comparison's either way
		}
		farther := right
		if in.Closer == right {
			farther = left
		}
		if !open {
			// Every question is held until it is answered: this one was.
			var prev *int
			err := tx.QueryRow(ctx, previousAnswerSQL, in.QuestionID).Scan(&prev)
			if errors.Is(err, pgx.ErrNoRows) {
				return study.Errorf(study.KindConflict, "this question is no longer open")
			}
			if err != nil {
				return err
			}
			switch {
			case prev == nil && !in.Skip:
				return study.Errorf(study.KindConflict, "this question was already answered with \"can't decide\"")
			case prev != nil && in.Skip:
				return study.Errorf(study.KindConflict, "this question was already answered with %d", *prev)
			case prev != nil && *prev != in.Closer:
				return study.Errorf(study.KindConflict, "this question was already answered with %d", *prev)
			}
			if next { // the same answer again: where the participant is now
				pr, err = s.nextAgain(ctx, tx, participantID)
				if KindOf(err) == study.KindNotOpen {
					pr, err = study.Progress{Answered: answered, Total: st.PerParticipant, Status: st.Status}, nil
				}
				return err
			}
			return nil
		}
		if st.Status == study.StatusClosed {
			return study.Errorf(study.KindNotOpen, "the study is closed")
		}
		t := triplet.Triplet{Anchor: anchor, Closer: in.Closer, Farther: farther}
		k := triplet.KeyOf(t)
		jc, kc := 0, 0
		if in.Closer == k.J {
			jc = 1
		} else {
			kc = 1
		}
		ds, stateful := s.designs[st.Design]
		designQuestion := stateful && qDesign == st.Design
		releasesSlot = in.Skip && designQuestion
		trial := qDesign == study.DesignCatch || qDesign == study.DesignRepeat
		heldout := qDesign == study.DesignHeldout // a triplet, but no vote
		if designQuestion && !in.Skip {
			record = ds
		}
		pre := &batchPart{
			queue: func(b *pgx.Batch, _ string) {
				if trial || in.Skip {
					var closer, correct any // NULL: skipped, or not a trial
					if !in.Skip {
						closer = in.Closer
						if expected != nil {
							correct = in.Closer == *expected
						}
					}
					b.Queue(insertTrialAnswerSQL, in.QuestionID, st.ID, participantID, closer, correct, in.ResponseMS)
					if in.Skip && designQuestion {
						b.Queue(releaseSkippedSQL, st.ID, participantID, k.Anchor, k.J, k.K)
					}
					return
				}
				b.Queue(insertAnswerSQL, in.QuestionID, st.ID, participantID, anchor, in.Closer, farther, in.ResponseMS)
				if !heldout {
					b.Queue(addVoteSQL, st.ID, k.Anchor, k.J, k.K, jc, kc)
				}
				if record != nil {
					b.Queue(inboxSQL, st.ID, participantID, t.Anchor, t.Closer, t.Farther, st.Arm)
				}
			},
			read: func(br pgx.BatchResults) error {
				n := 2
				switch {
				case trial || in.Skip:
					n = 1
					if in.Skip && designQuestion {
						n = 2
					}
				case heldout:
					n = 1
				case record != nil:
					n = 3
				}
				for range n {
					if _, err := br.Exec(); err != nil {
						return err
					}
				}
				return nil
			},
		}
		var code *string
		// The last answer completes the participant: the study's exclusion
		// rules, if it has any, are checked first, so that their code says
		// whether they were excluded.
		finishing := answered+1 >= st.PerParticipant
		checkRules := finishing && hasRules
		post := &batchPart{
			queue: func(b *pgx.Batch, nextID string) {
				var hold any // NULL: no next question yet
				if nextID != "" {
					hold = nextID
				}
				if checkRules {
					b.Queue(store.ApplyRulesSQL, participantID)
				}
				b.Queue(answeredSQL, participantID, hold, st.PerParticipant, newCompletionCode())
			},
			read: func(br pgx.BatchResults) error {
				if checkRules {
					if _, err := br.Exec(); err != nil {
						return err
					}
				}
				return br.QueryRow().Scan(&pr.Answered, &code)
			},
		}
		pr.Total, pr.Status, pr.CantDecide = st.PerParticipant, st.Status, st.Quality.CantDecide
		if !next || answered+1 >= st.PerParticipant || st.Status != study.StatusOpen {
			// answeredSQL makes the question held ahead, if any, the open one.
			if err := sendParts(ctx, tx, pre, post); err != nil {
				return err
			}
		} else if ahead.id != nil {
			// The question held ahead is next; the one after it is issued
			// in the same batch, unless there is none to ask.
			items, err := s.items.get(ctx, tx, st.ID, st.Version)
			if err != nil {
				return err
			}
			if pr.Question, err = ahead.question(ctx, tx, items, st.ID, participantID); err != nil {
				return err
			}
			if answered+2 >= st.PerParticipant || !s.asksAhead(st) {
				err = sendParts(ctx, tx, pre, post)
			} else if pr.Ahead, err = s.issue(ctx, tx, st, participantID, answered+2, items, pre, post, holdAhead); errors.Is(err, ErrExhausted) {
				pr.Ahead, err = nil, nil
			}
			if err != nil {
				return err
			}
		} else {
			items, err := s.items.get(ctx, tx, st.ID, st.Version)
			if err != nil {
				return err
			}
			pr.Question, err = s.issue(ctx, tx, st, participantID, answered+1, items, pre, post, holdOpen)
			if errors.Is(err, ErrExhausted) {
				pr.Question = nil
				if err := s.complete(ctx, tx, participantID, &pr); err != nil {
					return err
				}
				code = &pr.CompletionCode
			} else if err != nil {
				return err
			} else if err := s.issueAhead(ctx, tx, st, participantID, answered+2, items, nil, &pr); err != nil {
				return err
			}
		}
		if code != nil {
			pr.Done, pr.CompletionCode = true, *code
		}
		created = true
		return nil
	})
	if KindOf(err) == study.KindNotFound && studyID == 0 {
		// No such question: perhaps the participant is gone with it.
		var exists bool
		if qerr := s.pool.QueryRow(ctx, participantExistsSQL, participantID).Scan(&exists); qerr == nil && !exists {
			err = s.gone(participantID)
		}
	}
	if err != nil {
		return false, study.Progress{}, err
	}
	key := armKey{studyID, st.Arm}
	if releasesSlot && created {
		s.designs[st.Design].clearFull(key) // a skipped design question gave its slot back
	}
	if record != nil {
		// The answer is durable; the design records it in a transaction of
		// its own, one writer per arm at a time (design_scheduler.go).
		if record.kind.async {
			record.recordSoon(key)
		} else {
			record.recordPending(ctx, key)
		}
	}
	return created, pr, nil
}

// sendParts sends pre's and post's statements in one batch and reads them.
func sendParts(ctx context.Context, tx pgx.Tx, parts ...*batchPart) error {
	b := &pgx.Batch{}
	for _, p := range parts {
		p.queue(b, "")
	}
	br := tx.SendBatch(ctx, b)
	var err error
	for _, p := range parts {
		if err = p.read(br); err != nil {
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}
