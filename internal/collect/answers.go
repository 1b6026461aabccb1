package collect

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/store"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/internal/trial"
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
			p.ahead_question, a.anchor, a.left_idx, a.right_idx, a.design, a.issued_at, a.options, p.preview,
			q.options, s.format
		FROM questions q JOIN participants p ON p.id = q.participant_id JOIN studies s ON s.id = q.study_id
		LEFT JOIN questions a ON a.id = p.ahead_question
		WHERE q.id = $1 FOR UPDATE OF p`
	// previousAnswerSQL reads the answer given to a question: a triplet's
	// closer, or a trial's or skip's (NULL: skipped).
	previousAnswerSQL = `
		SELECT closer, choices FROM answers WHERE question_id = $1
		UNION ALL SELECT closer, NULL FROM trial_answers WHERE question_id = $1`
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
		INSERT INTO answers (question_id, study_id, participant_id, anchor, closer, farther, response_ms, listen_ms)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`
	// insertChoicesSQL stores the answer to a trial of another format
	// than the triplet (issue 27): its choices in order ($9), and the
	// first triplet it derives.
	insertChoicesSQL = `
		INSERT INTO answers (question_id, study_id, participant_id, anchor, closer, farther, response_ms, listen_ms, choices)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`
	addVoteSQL = `
		INSERT INTO votes (study_id, anchor, j, k, j_closer, k_closer) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (study_id, anchor, j, k) DO UPDATE
		SET j_closer = votes.j_closer + excluded.j_closer, k_closer = votes.k_closer + excluded.k_closer`
	// addVotesSQL casts the votes of a trial's derived triplets in one
	// statement: $2..$6 the keys, sorted (so concurrent answers lock the
	// rows in one order) and distinct (ON CONFLICT may touch a row once).
	// A rank 8-choose-2 answer derives 13 triplets: as 13 statements they
	// cost it about a third more CPU than a triplet's answer.
	addVotesSQL = `
		INSERT INTO votes (study_id, anchor, j, k, j_closer, k_closer)
		SELECT $1, u.a, u.j, u.k, u.jc, u.kc FROM unnest($2::int[], $3::int[], $4::int[], $5::int[], $6::int[]) AS u(a, j, k, jc, kc)
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

// answer is Answer, and AnswerNext when next is set, in the steps of one
// transaction (answering): lock the question's participant and read the
// question (the transaction's first batch, lockAnswerSQL), check the
// answer, queue its writes with the participant's count, send them in one
// batch with the next question's issue, commit, and hand the answer to its
// design.
func (s *Store) answer(ctx context.Context, participantID int64, in study.AnswerInput, next bool) (created bool, pr study.Progress, err error) {
	if in.ResponseMS != nil && (*in.ResponseMS < 0 || *in.ResponseMS > study.MaxResponseMS) {
		return false, pr, study.Errorf(study.KindInvalid, "response_ms must be between 0 and %d", study.MaxResponseMS)
	}
	if in.ListenMS != nil {
		if err := study.CheckListenMS(*in.ListenMS); err != nil {
			return false, pr, err
		}
	}
	a := &answering{participantID: participantID, in: in, next: next}
	err = s.inTxFrom(ctx, lockAnswerSQL, []any{in.QuestionID}, a.scan, func(tx pgx.Tx) error {
		a.locked = true
		a.created, a.pr, a.code, a.record, a.releasesSlot = false, study.Progress{}, nil, nil, false
		if err := a.check(); err != nil {
			return err
		}
		if !a.open {
			return s.answerAgain(ctx, tx, a)
		}
		if a.st.Status == study.StatusClosed && !a.st.Preview {
			return study.Errorf(study.KindNotOpen, "the study is closed")
		}
		a.route(s.designs)
		if err := s.writeAndIssueNext(ctx, tx, a); err != nil {
			return err
		}
		if a.code != nil {
			a.pr.Done, a.pr.CompletionCode = true, *a.code
		}
		a.created = true
		return nil
	})
	if KindOf(err) == study.KindNotFound && !a.locked {
		// No such question: perhaps the participant is gone with it.
		var exists bool
		if qerr := s.pool.QueryRow(ctx, participantExistsSQL, participantID).Scan(&exists); qerr == nil && !exists {
			err = s.gone(participantID)
		}
	}
	if err != nil {
		return false, study.Progress{}, err
	}
	s.handOff(ctx, a)
	return a.created, a.pr, nil
}

// answering is one answer's transaction: what its steps read, decide and
// return.
type answering struct {
	participantID int64
	in            study.AnswerInput
	next          bool // AnswerNext: the next question is issued in the answer's batch

	// The question and its participant, as lockAnswerSQL read them.
	owner               int64
	anchor, left, right int
	qDesign             string
	expected            *int
	st                  studyState
	quality             []byte
	open                bool // the participant holds the question: it is unanswered
	answered            int
	hasRules            bool // the study has exclusion rules
	ahead               heldQuestion
	locked              bool  // the question exists: the transaction read it
	options             []int // a trial's items shown (nil: a triplet)

	// What check and route made of the answer.
	t              triplet.Triplet
	derived        []triplet.Triplet // a trial's triplets, sorted by key (t is the first it derives)
	catchCorrect   *bool             // an odd-one-out or rank catch trial: whether it was answered right
	designQuestion bool              // a question of the participant's arm's stateful design
	record         *DesignScheduler  // the design to record the answer in, after the commit
	releasesSlot   bool              // a skip of a design question: its comparison goes back to the design

	// The transaction's results.
	created bool
	pr      study.Progress
	code    *string // the participant's completion code, when answeredSQL or complete gave one
}

// scan reads lockAnswerSQL's row: the question, its study and participant.
func (a *answering) scan(r pgx.Row) error {
	st := &a.st
	var format string
	err := r.Scan(append([]any{&a.owner, &a.anchor, &a.left, &a.right, &a.qDesign, &a.expected,
		&st.ID, &st.Slug, &st.Status, &st.Design, &st.Arm, &st.HeldoutShare,
		&st.PerParticipant, &st.Version, &a.quality, &st.IdleMinutes, &a.hasRules, &a.open, &a.answered},
		append(a.ahead.targets(), &st.Preview, &a.options, &format)...)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return study.NotFound("question")
	}
	if err != nil {
		return err
	}
	st.Format = study.MustStudyFormat(format)
	st.forPreview()
	return st.scanQuality(a.quality)
}

// check checks that the question was issued to the participant and that
// the answer is one the study takes, and reads it as a triplet (a skip as
// one whose closer is the left option: the comparison's key is the same).
func (a *answering) check() error {
	if a.owner != a.participantID {
		return study.Errorf(study.KindForbidden, "this question was issued to another participant")
	}
	if a.in.Skip && !a.st.Quality.CantDecide {
		return study.Errorf(study.KindInvalid, "this study does not offer \"can't decide\"")
	}
	if a.in.Skip && a.in.Choices != nil {
		return study.Errorf(study.KindInvalid, "send either choices or skip, not both")
	}
	if a.options != nil {
		return a.checkTrial()
	}
	if a.in.Choices != nil && !a.in.Skip {
		if len(a.in.Choices) != 1 {
			return study.Errorf(study.KindInvalid, "%d choices: a triplet answer chooses one option", len(a.in.Choices))
		}
		a.in.Closer = a.in.Choices[0]
	}
	if !a.in.Skip && a.in.Closer != a.left && a.in.Closer != a.right {
		return study.Errorf(study.KindInvalid, "closer must be one of the two options, %d or %d", a.left, a.right)
	}
	if a.in.Skip {
		a.in.Closer = a.left
	}
	farther := a.right
	if a.in.Closer == a.right {
		farther = a.left
	}
	a.t = triplet.Triplet{Anchor: a.anchor, Closer: a.in.Closer, Farther: farther}
	return nil
}

// checkTrial checks the answer to a trial of another format than the
// triplet (issue 27) with internal/trial's checks (a choice not shown,
// repeated, too many or too few: KindInvalid with the reason) and derives
// its triplets, sorted by key so that the votes of concurrent answers are
// locked in one order. A skip derives none.
func (a *answering) checkTrial() error {
	if a.in.Skip {
		a.t = triplet.Triplet{Anchor: a.anchor, Closer: a.left, Farther: a.right}
		return nil
	}
	if a.in.Choices == nil {
		return study.Errorf(study.KindInvalid, "choices are missing: a %s answer is the chosen items in order", a.st.Format.Format)
	}
	if a.qDesign == study.DesignCatch {
		return a.checkFormatCatch()
	}
	if a.qDesign == study.DesignRepeat {
		return a.checkFormatRepeat()
	}
	var err error
	switch a.st.Format.Format {
	case study.FormatOddOneOut:
		if len(a.options) != 3 {
			return fmt.Errorf("odd-one-out question %s shows %d items", a.in.QuestionID, len(a.options))
		}
		var t trial.OddOneOut
		if t, err = trial.CheckOddOneOut([3]int(a.options), a.in.Choices); err == nil {
			a.derived = t.Triplets(nil)
		}
	case study.FormatRank:
		var t trial.Rank
		if t, err = trial.RankAnswer(a.anchor, a.options, a.st.Format.Rank.K, a.in.Choices); err == nil {
			a.derived = t.Triplets(nil)
		}
	default:
		return fmt.Errorf("question %s shows a trial, but its study asks %s questions", a.in.QuestionID, a.st.Format)
	}
	var refused *trial.AnswerError
	if errors.As(err, &refused) {
		return study.Errorf(study.KindInvalid, "%s", refused.Reason)
	}
	if err != nil {
		return err
	}
	a.t = a.derived[0]
	slices.SortFunc(a.derived, func(x, y triplet.Triplet) int {
		kx, ky := triplet.KeyOf(x), triplet.KeyOf(y)
		return cmp.Or(cmp.Compare(kx.Anchor, ky.Anchor), cmp.Compare(kx.J, ky.J), cmp.Compare(kx.K, ky.K))
	})
	return nil
}

// checkFormatCatch judges the answer to an odd-one-out or rank catch
// trial (trial.CatchOddOneOut: the item shown once; trial.CatchRank: the
// query chosen first); it derives no triplet, and is stored as a trial
// answer with its first choice and whether it was right.
func (a *answering) checkFormatCatch() error {
	var ok bool
	var err error
	if a.st.Format.Format == study.FormatOddOneOut && len(a.options) == 3 {
		if _, err = trial.CheckOddOneOut([3]int(a.options), a.in.Choices); err == nil {
			ok, err = trial.CatchOddOneOut([3]int(a.options), a.in.Choices[0])
		}
	} else {
		ok, err = trial.CatchRank(a.anchor, a.options, a.st.Format.Choices(), a.in.Choices)
	}
	var refused *trial.AnswerError
	if errors.As(err, &refused) {
		return study.Errorf(study.KindInvalid, "%s", refused.Reason)
	}
	if err != nil {
		return err
	}
	a.catchCorrect, a.in.Closer = &ok, a.in.Choices[0]
	a.t = triplet.Triplet{Anchor: a.anchor, Closer: a.left, Farther: a.right}
	return nil
}

// checkFormatRepeat judges the answer to an odd-one-out or rank repeat
// trial (the participant's own earlier trial, its items in a fresh
// order): checked as any trial's answer, consistent when its first choice
// is the earlier answer's (expected: the same odd one; the same most
// similar reference). Like a triplet's repeat it derives no triplet and
// is stored as a trial answer with its first choice and whether it
// agreed.
func (a *answering) checkFormatRepeat() error {
	var err error
	switch {
	case a.st.Format.Format == study.FormatOddOneOut && len(a.options) == 3:
		_, err = trial.CheckOddOneOut([3]int(a.options), a.in.Choices)
	case a.st.Format.Format == study.FormatRank:
		_, err = trial.RankAnswer(a.anchor, a.options, a.st.Format.Rank.K, a.in.Choices)
	default:
		return fmt.Errorf("repeat question %s shows %d items, its study asks %s questions", a.in.QuestionID, len(a.options), a.st.Format)
	}
	var refused *trial.AnswerError
	if errors.As(err, &refused) {
		return study.Errorf(study.KindInvalid, "%s", refused.Reason)
	}
	if err != nil {
		return err
	}
	ok := a.expected != nil && a.in.Choices[0] == *a.expected
	a.catchCorrect, a.in.Closer = &ok, a.in.Choices[0]
	a.t = triplet.Triplet{Anchor: a.anchor, Closer: a.left, Farther: a.right}
	return nil
}

// answerAgain answers a question answered before: the same answer again
// stores nothing (and AnswerNext returns where the participant is now),
// another one is a conflict.
func (s *Store) answerAgain(ctx context.Context, tx pgx.Tx, a *answering) error {
	// Every question is held until it is answered: this one was.
	var prev *int
	var prevChoices []int
	err := tx.QueryRow(ctx, previousAnswerSQL, a.in.QuestionID).Scan(&prev, &prevChoices)
	if errors.Is(err, pgx.ErrNoRows) {
		return study.Errorf(study.KindConflict, "this question is no longer open")
	}
	if err != nil {
		return err
	}
	switch {
	case prev == nil && !a.in.Skip:
		return study.Errorf(study.KindConflict, "this question was already answered with \"can't decide\"")
	case prevChoices != nil && a.in.Skip:
		return study.Errorf(study.KindConflict, "this question was already answered with %v", prevChoices)
	case prevChoices != nil && !slices.Equal(prevChoices, a.in.Choices):
		return study.Errorf(study.KindConflict, "this question was already answered with %v", prevChoices)
	case prevChoices != nil:
	case prev != nil && a.in.Skip:
		return study.Errorf(study.KindConflict, "this question was already answered with %d", *prev)
	case prev != nil && *prev != a.in.Closer:
		return study.Errorf(study.KindConflict, "this question was already answered with %d", *prev)
	}
	if !a.next {
		return nil
	}
	a.pr, err = s.nextAgain(ctx, tx, a.participantID)
	if KindOf(err) == study.KindNotOpen {
		a.pr, err = study.Progress{Answered: a.answered, Total: a.st.PerParticipant, Status: a.st.Status}, nil
	}
	return err
}

// route decides where an open question's answer goes besides the answers:
// to the design of the participant's arm (record, after the commit) when
// the question was the design's and not skipped; a skipped design
// question gives its comparison back to the design.
func (a *answering) route(designs map[string]*DesignScheduler) {
	ds, stateful := designs[a.st.Design]
	a.designQuestion = stateful && a.qDesign == a.st.Design
	a.releasesSlot = a.in.Skip && a.designQuestion
	if a.designQuestion && !a.in.Skip {
		a.record = ds
	}
}

// queueWrites queues the answer's writes (a batchStep): a trial's answer
// or a skip (with the skipped design question's comparison released), or
// the triplet with its vote (none for a held-out question) and, for a
// design question, its row in the design's inbox. Their results are
// command tags no step reads: the batch fails on their errors.
func (a *answering) queueWrites(b *pgx.Batch, _ string) {
	st, in := a.st, a.in
	if a.qDesign == study.DesignCatch || a.qDesign == study.DesignRepeat || in.Skip {
		var closer, correct any // NULL: skipped, or not a trial
		if !in.Skip {
			closer = in.Closer
			if a.expected != nil {
				correct = in.Closer == *a.expected
			}
			if a.catchCorrect != nil {
				correct = *a.catchCorrect
			}
		}
		b.Queue(insertTrialAnswerSQL, in.QuestionID, st.ID, a.participantID, closer, correct, in.ResponseMS)
		if a.releasesSlot {
			k := triplet.KeyOf(a.t)
			b.Queue(releaseSkippedSQL, st.ID, a.participantID, k.Anchor, k.J, k.K)
		}
		return
	}
	t := a.t
	votes := []triplet.Triplet{t}
	if a.derived != nil {
		b.Queue(insertChoicesSQL, in.QuestionID, st.ID, a.participantID, t.Anchor, t.Closer, t.Farther, in.ResponseMS, in.ListenMS, in.Choices)
		votes = a.derived
	} else {
		b.Queue(insertAnswerSQL, in.QuestionID, st.ID, a.participantID, t.Anchor, t.Closer, t.Farther, in.ResponseMS, in.ListenMS)
	}
	if a.qDesign != study.DesignHeldout && !st.Preview { // a held-out question's or a preview's triplet casts no vote
		queueVotes(b, st.ID, votes)
	}
	if a.record != nil {
		if a.derived != nil {
			// A trial's design (the active design of an odd-one-out or rank
			// study) counts the trial by its key, the three items its pool
			// row and lease hold (anchor, left, right), not by the first
			// triplet it derives: the fit reads the answers themselves.
			t = triplet.Triplet{Anchor: a.anchor, Closer: a.left, Farther: a.right}
		}
		b.Queue(inboxSQL, st.ID, a.participantID, t.Anchor, t.Closer, t.Farther, st.Arm)
	}
}

// queueAnswered queues the answer's count on the participant (a
// batchStep), who then holds nextID, the next question, if it was issued;
// with their last answer, after the study's exclusion rules if it has any
// (their code says whether they were excluded), it completes them. Its
// callback reads their count and code.
func (a *answering) queueAnswered(b *pgx.Batch, nextID string) {
	var hold any // NULL: no next question yet
	if nextID != "" {
		hold = nextID
	}
	if a.answered+1 >= a.st.PerParticipant && a.hasRules {
		b.Queue(store.ApplyRulesSQL, a.participantID)
	}
	b.Queue(answeredSQL, a.participantID, hold, a.st.PerParticipant, newCompletionCode()).QueryRow(func(row pgx.Row) error {
		return row.Scan(&a.pr.Answered, &a.code)
	})
}

// writeAndIssueNext sends the answer's writes and count in one batch: with
// AnswerNext, in the batch that issues the question after the next one
// (the participant held it ahead) or the next one (then the one after it
// is issued ahead), so that an answer and its next question cost one
// round trip; on their own otherwise (answeredSQL makes the question held
// ahead, if any, the open one).
func (s *Store) writeAndIssueNext(ctx context.Context, tx pgx.Tx, a *answering) error {
	st := a.st
	a.pr.Total, a.pr.Status, a.pr.CantDecide = st.PerParticipant, st.Status, st.Quality.CantDecide
	if !a.next || a.answered+1 >= st.PerParticipant || !st.takesAnswers() {
		return sendSteps(ctx, tx, a.queueWrites, a.queueAnswered)
	}
	items, err := s.items.get(ctx, tx, st.ID, st.Version)
	if err != nil {
		return err
	}
	if a.ahead.id != nil {
		// The question held ahead is next; the one after it is issued in
		// the same batch, unless there is none to ask.
		if a.pr.Question, err = a.ahead.question(ctx, tx, items, st, a.participantID); err != nil {
			return err
		}
		if a.answered+2 >= st.PerParticipant || !s.asksAhead(st) {
			return sendSteps(ctx, tx, a.queueWrites, a.queueAnswered)
		}
		a.pr.Ahead, err = s.issue(ctx, tx, st, a.participantID, a.answered+2, items, a.queueWrites, a.queueAnswered, holdAhead)
		if errors.Is(err, ErrExhausted) {
			a.pr.Ahead, err = nil, nil
		}
		return err
	}
	a.pr.Question, err = s.issue(ctx, tx, st, a.participantID, a.answered+1, items, a.queueWrites, a.queueAnswered, holdOpen)
	if errors.Is(err, ErrExhausted) {
		a.pr.Question = nil
		if err := s.complete(ctx, tx, a.participantID, &a.pr); err != nil {
			return err
		}
		a.code = &a.pr.CompletionCode
		return nil
	}
	if err != nil {
		return err
	}
	return s.issueAhead(ctx, tx, st, a.participantID, a.answered+2, items, nil, &a.pr)
}

// handOff runs after the commit: the answer is durable, and its design
// records it in a transaction of its own, one writer per arm at a time
// (design_scheduler.go); a skipped design question gave its slot back.
func (s *Store) handOff(ctx context.Context, a *answering) {
	key := armKey{a.st.ID, a.st.Arm}
	if a.releasesSlot && a.created {
		s.designs[a.st.Design].clearFull(key)
	}
	if a.record == nil {
		return
	}
	if a.record.kind.async {
		a.record.recordSoon(key)
	} else {
		a.record.recordPending(ctx, key)
	}
}

// sendSteps sends the steps' statements in one batch, their callbacks
// reading the results.
func sendSteps(ctx context.Context, tx pgx.Tx, steps ...batchStep) error {
	b := &pgx.Batch{}
	for _, step := range steps {
		step(b, "")
	}
	return tx.SendBatch(ctx, b).Close()
}

// queueVotes queues the votes of triplets ts, sorted by key (checkTrial):
// one triplet's as addVoteSQL, as every triplet answer did before formats;
// several as one addVotesSQL, equal keys summed.
func queueVotes(b *pgx.Batch, studyID int64, ts []triplet.Triplet) {
	if len(ts) == 1 {
		k := triplet.KeyOf(ts[0])
		jc, kc := 0, 1
		if ts[0].Closer == k.J {
			jc, kc = 1, 0
		}
		b.Queue(addVoteSQL, studyID, k.Anchor, k.J, k.K, jc, kc)
		return
	}
	n := len(ts)
	anchors, js, ks, jcs, kcs := make([]int32, 0, n), make([]int32, 0, n), make([]int32, 0, n), make([]int32, 0, n), make([]int32, 0, n)
	for _, t := range ts {
		k := triplet.KeyOf(t)
		jc, kc := int32(0), int32(1)
		if t.Closer == k.J {
			jc, kc = 1, 0
		}
		if last := len(anchors) - 1; last >= 0 && anchors[last] == int32(k.Anchor) && js[last] == int32(k.J) && ks[last] == int32(k.K) {
			jcs[last] += jc
			kcs[last] += kc
			continue
		}
		anchors, js, ks = append(anchors, int32(k.Anchor)), append(js, int32(k.J)), append(ks, int32(k.K))
		jcs, kcs = append(jcs, jc), append(kcs, kc)
	}
	b.Queue(addVotesSQL, studyID, anchors, js, ks, jcs, kcs)
}
