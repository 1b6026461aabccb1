package collect

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/design"
	"github.com/closer-lab/closer/internal/secret"
	"github.com/closer-lab/closer/internal/store"
	"github.com/closer-lab/closer/internal/study"
)

// studyState is what issuing a question needs of a study, for one
// participant: Design is their arm's design (the study's design in a study
// without arms), Arm their arm.
type studyState struct {
	ID             int64
	Slug           string
	Status         string
	Design         string
	Arm            int
	HeldoutShare   float64
	PerParticipant int
	Version        int64 // studies.version: the items in memory are current at it
	Format         study.StudyFormat
	Quality        study.QualityControl
	IdleMinutes    int // a participant this long without an answer is idle (0: never)
	// Preview: the participant is a researcher's preview session (issue
	// 26), asked whatever the study's status.
	Preview bool
}

// forPreview makes st what a preview session is asked from: random
// questions (and the study's catch and repeat trials), never a design's
// or a held-out one, so that a preview changes no design's state or pool
// and its answers, which cast no vote, reach no fit.
func (st *studyState) forPreview() {
	if st.Preview {
		st.Design, st.HeldoutShare = study.DesignRandom, 0
	}
}

// takesAnswers reports whether the participant may be asked and answer
// now: the study is open, or they preview it.
func (st studyState) takesAnswers() bool {
	return st.Status == study.StatusOpen || st.Preview
}

// heldOut reports whether question number pos (from 0) of the participant
// is held out: design.HeldOut with the study's share, seeded by the study's
// id (so the positions are a function of the study and the participant).
func (st studyState) heldOut(participantID int64, pos int) bool {
	return design.HeldOut(st.HeldoutShare, uint64(st.ID), uint64(participantID), pos)
}

// scanQuality parses the raw studies.quality the locking statements read.
func (st *studyState) scanQuality(raw []byte) error {
	q, err := store.ParseQuality(raw)
	st.Quality = q
	return err
}

// The SQL of Next, by name so that TestHotQueryPlans explains these very
// strings on a large study.
const (
	// lockParticipantSQL locks the participant's row and reads their
	// progress, their study (with their arm's design) and the question
	// they hold, if any.
	lockParticipantSQL = `
		SELECT s.id, s.slug, s.status, coalesce(s.arms -> p.arm ->> 'design', s.design), p.arm, s.heldout_share,
			s.questions_per_participant, s.version, s.quality, s.idle_minutes,
			p.answered, p.completion_code, p.open_question, q.anchor, q.left_idx, q.right_idx, q.design, q.issued_at, q.options,
			p.ahead_question, a.anchor, a.left_idx, a.right_idx, a.design, a.issued_at, a.options, p.preview, s.format
		FROM participants p JOIN studies s ON s.id = p.study_id
		LEFT JOIN questions q ON q.id = p.open_question
		LEFT JOIN questions a ON a.id = p.ahead_question
		WHERE p.id = $1 FOR UPDATE OF p`
	// insertQuestionSQL issues a question unless the participant was asked
	// its comparison before (questions_comparison_once; the id is new).
	insertQuestionSQL = `
		INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design, options)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING RETURNING issued_at`
	// openQuestionSQL reads the question a participant holds.
	openQuestionSQL = `SELECT anchor, left_idx, right_idx, design, issued_at, options FROM questions WHERE id = $1`
	// insertCatchSQL issues catch trial $1 to participant $3 of study $2:
	// one of the study's gold triplets the participant was not asked, in
	// an order drawn from $7, else anchor $4 with options $4 and $5; the
	// right answer (closer, expected) on the right when $6. Nothing when
	// the participant had this very one (questions_comparison_once).
	insertCatchSQL = `
		INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design, expected)
		SELECT $1, $2, $3, c.anchor, CASE WHEN $6 THEN c.farther ELSE c.closer END,
			CASE WHEN $6 THEN c.closer ELSE c.farther END, 'catch', c.closer
		FROM (
			(SELECT 0 AS pri, ia.idx AS anchor, ic.idx AS closer, iff.idx AS farther
			FROM gold_triplets g JOIN items ia ON ia.id = g.anchor_item
				JOIN items ic ON ic.id = g.closer_item JOIN items iff ON iff.id = g.farther_item
			WHERE g.study_id = $2 AND NOT EXISTS (SELECT 1 FROM questions q WHERE q.participant_id = $3 AND q.anchor = ia.idx
				AND least(q.left_idx, q.right_idx) = least(ic.idx, iff.idx) AND greatest(q.left_idx, q.right_idx) = greatest(ic.idx, iff.idx))
			ORDER BY md5(g.line::text || $7::text) LIMIT 1)
			UNION ALL SELECT 1, $4::int, $4::int, $5::int
		) c ORDER BY c.pri LIMIT 1
		ON CONFLICT DO NOTHING
		RETURNING anchor, left_idx, right_idx, issued_at`
	// insertFormatCatchSQL issues an odd-one-out or rank catch trial $1
	// (planFormatCatch) showing options $7, keyed ($4, $5, $6).
	insertFormatCatchSQL = `
		INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design, options)
		VALUES ($1, $2, $3, $4, $5, $6, 'catch', $7) ON CONFLICT DO NOTHING
		RETURNING anchor, left_idx, right_idx, issued_at`
	// insertRepeatSQL issues repeat trial $1: a comparison participant $3
	// answered and was not asked again yet, chosen in an order fixed by the
	// participant ($4), with left and right swapped; expected is their
	// first choice. No row when they have answered nothing to repeat.
	insertRepeatSQL = `
		INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design, expected)
		SELECT $1, $2, $3, q.anchor, q.right_idx, q.left_idx, 'repeat', a.closer
		FROM questions q JOIN answers a ON a.question_id = q.id
		WHERE q.participant_id = $3 AND q.design NOT IN ('import', 'catch', 'repeat')
			AND NOT EXISTS (SELECT 1 FROM questions r WHERE r.participant_id = $3 AND r.design = 'repeat'
				AND r.anchor = q.anchor AND r.left_idx = q.right_idx AND r.right_idx = q.left_idx)
		ORDER BY md5(q.id || $4::text) LIMIT 1
		RETURNING anchor, left_idx, right_idx, issued_at`
	// insertFormatRepeatSQL is insertRepeatSQL for an odd-one-out or rank
	// study (issue 27): the participant's own earlier trial, its items in
	// a fresh random order; expected is the first choice of their answer
	// (the odd one; the most similar reference), the one a consistent
	// participant makes again.
	insertFormatRepeatSQL = `
		INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design, expected, options)
		SELECT $1, $2, $3, q.anchor, q.right_idx, q.left_idx, 'repeat', a.choices[1],
			(SELECT array_agg(o ORDER BY random()) FROM unnest(q.options) o)
		FROM questions q JOIN answers a ON a.question_id = q.id
		WHERE q.participant_id = $3 AND q.design NOT IN ('import', 'catch', 'repeat') AND q.options IS NOT NULL AND a.choices IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM questions r WHERE r.participant_id = $3 AND r.design = 'repeat'
				AND r.anchor = q.anchor AND r.left_idx = q.right_idx AND r.right_idx = q.left_idx)
		ORDER BY md5(q.id || $4::text) LIMIT 1
		RETURNING anchor, left_idx, right_idx, issued_at, options`
	// holdQuestionSQL makes question $2 the participant's open question
	// (none if it was not inserted).
	holdQuestionSQL = `UPDATE participants SET open_question = (SELECT id FROM questions WHERE id = $2) WHERE id = $1`
	// holdAheadSQL makes question $2 the one the participant holds after
	// their open question (none if it was not inserted).
	holdAheadSQL = `UPDATE participants SET ahead_question = (SELECT id FROM questions WHERE id = $2) WHERE id = $1`
)

// holdSlot says which of a participant's two held questions an issue
// fills.
type holdSlot int

const (
	holdOpen  holdSlot = iota // the question they answer now
	holdAhead                 // the one after it, issued one step ahead
)

// sql is the statement that makes the participant hold a question in h.
func (h holdSlot) sql() string {
	if h == holdAhead {
		return holdAheadSQL
	}
	return holdQuestionSQL
}

// heldQuestion is a question a participant holds as read by a join: its id,
// and its comparison unless the join could not see the row.
type heldQuestion struct {
	id                  *string
	anchor, left, right *int
	design              *string
	issued              *time.Time
	options             []int // a trial's items shown (nil: a triplet)
}

// targets are the scan destinations of the held question's columns.
func (h *heldQuestion) targets() []any {
	return []any{&h.id, &h.anchor, &h.left, &h.right, &h.design, &h.issued, &h.options}
}

// question returns the held question, reading its row in tx when the join
// did not see it: the row lock waited for the transaction that issued it,
// and the join, from the statement's snapshot, could not see it; a
// statement of its own can.
func (h *heldQuestion) question(ctx context.Context, tx pgx.Tx, items *studyItems, st studyState, participantID int64) (*study.Question, error) {
	var c study.Comparison
	var issued time.Time
	if h.anchor != nil {
		c, issued = study.Comparison{Anchor: *h.anchor, Left: *h.left, Right: *h.right, Design: *h.design, Options: h.options}, *h.issued
	} else if err := tx.QueryRow(ctx, openQuestionSQL, *h.id).Scan(&c.Anchor, &c.Left, &c.Right, &c.Design, &issued, &c.Options); err != nil {
		return nil, fmt.Errorf("a question held: %w", err)
	}
	if c.Options != nil {
		c.Format, c.Choose = st.Format.Format, st.Format.Choices()
	}
	return items.question(*h.id, st.ID, participantID, c, issued), nil
}

// Next returns the participant's open question, issuing one when they have
// none. Asking again before answering returns the same question: the
// participant's row is locked for the transaction and holds their one open
// question. The comparison comes from the study's design. When the
// participant has answered questions_per_participant questions, or the
// design has nothing left for them, they are marked complete and receive a
// completion code.
func (s *Store) Next(ctx context.Context, participantID int64) (study.Progress, error) {
	var (
		pr   study.Progress
		lock lockedParticipant
	)
	err := s.inTxFrom(ctx, lockParticipantSQL, []any{participantID},
		func(r pgx.Row) error { return lock.scan(r, &pr) },
		func(tx pgx.Tx) error { return s.next(ctx, tx, participantID, &lock, &pr) })
	if KindOf(err) == study.KindNotFound {
		err = s.gone(participantID)
	}
	if err != nil {
		return study.Progress{}, fmt.Errorf("next question: %w", err)
	}
	return pr, nil
}

// lockedParticipant is what lockParticipantSQL reads of a participant.
type lockedParticipant struct {
	st          studyState
	code        *string
	open, ahead heldQuestion
}

// scan reads lockParticipantSQL's row into l and pr (Answered, Total,
// Status).
func (l *lockedParticipant) scan(r pgx.Row, pr *study.Progress) error {
	*pr = study.Progress{}
	var quality []byte
	var format string
	dst := append([]any{&l.st.ID, &l.st.Slug, &l.st.Status, &l.st.Design, &l.st.Arm, &l.st.HeldoutShare,
		&l.st.PerParticipant, &l.st.Version, &quality, &l.st.IdleMinutes,
		&pr.Answered, &l.code}, l.open.targets()...)
	err := r.Scan(append(append(dst, l.ahead.targets()...), &l.st.Preview, &format)...)
	l.st.Format = study.MustStudyFormat(format)
	if errors.Is(err, pgx.ErrNoRows) {
		return study.NotFound("participant")
	}
	pr.Total, pr.Status = l.st.PerParticipant, l.st.Status
	if err != nil {
		return err
	}
	l.st.forPreview()
	err = l.st.scanQuality(quality)
	pr.CantDecide = l.st.Quality.CantDecide
	return err
}

// next is Next inside tx, after the participant's row was locked and read.
func (s *Store) next(ctx context.Context, tx pgx.Tx, participantID int64, l *lockedParticipant, pr *study.Progress) error {
	st := l.st
	if l.code != nil {
		pr.Done, pr.CompletionCode = true, *l.code
		return nil
	}
	if !st.takesAnswers() {
		return study.Errorf(study.KindNotOpen, "the study is %s", st.Status)
	}
	items, err := s.items.get(ctx, tx, st.ID, st.Version)
	if err != nil {
		return err
	}
	if l.open.id != nil {
		if pr.Question, err = l.open.question(ctx, tx, items, st, participantID); err != nil {
			return err
		}
		return s.issueAhead(ctx, tx, st, participantID, pr.Answered+1, items, &l.ahead, pr)
	}
	if pr.Answered >= pr.Total {
		return s.complete(ctx, tx, participantID, pr)
	}
	q, err := s.issue(ctx, tx, st, participantID, pr.Answered, items, nil, nil, holdOpen)
	if errors.Is(err, ErrExhausted) {
		return s.complete(ctx, tx, participantID, pr)
	}
	if err != nil {
		return err
	}
	pr.Question = q
	return s.issueAhead(ctx, tx, st, participantID, pr.Answered+1, items, nil, pr)
}

// issueAhead sets pr.Ahead to the question the participant holds after
// their open one (held, when it is set), issuing it when they hold none and
// question number `position` (counting from 0) is one they will be asked.
// Nothing left to ask is no error: there is no question ahead.
func (s *Store) issueAhead(ctx context.Context, tx pgx.Tx, st studyState, participantID int64, position int, items *studyItems,
	held *heldQuestion, pr *study.Progress) error {
	var err error
	switch {
	case held != nil && held.id != nil:
		pr.Ahead, err = held.question(ctx, tx, items, st, participantID)
	case position < pr.Total && s.asksAhead(st):
		pr.Ahead, err = s.issue(ctx, tx, st, participantID, position, items, nil, nil, holdAhead)
		if errors.Is(err, ErrExhausted) {
			pr.Ahead, err = nil, nil
		}
	}
	return err
}

// asksAhead reports whether a study's questions are issued one step ahead:
// yes but for a basis design (arm), whose open comparisons depend on the
// answers just given, so a comparison held a question longer would keep it
// from the others and turn their questions into fallbacks.
func (s *Store) asksAhead(st studyState) bool {
	ds, ok := s.designs[st.Design]
	return !ok || ds.kind.async
}

// nextAgain is next for the participant whose row tx already holds (a
// repeated answer): it locks and reads the row again in tx.
func (s *Store) nextAgain(ctx context.Context, tx pgx.Tx, participantID int64) (study.Progress, error) {
	var (
		pr   study.Progress
		lock lockedParticipant
	)
	if err := lock.scan(tx.QueryRow(ctx, lockParticipantSQL, participantID), &pr); err != nil {
		return study.Progress{}, err
	}
	err := s.next(ctx, tx, participantID, &lock, &pr)
	return pr, err
}

// complete marks a participant done with their completion code.
func (s *Store) complete(ctx context.Context, tx pgx.Tx, participantID int64, pr *study.Progress) error {
	code, err := completeParticipant(ctx, tx, participantID)
	if err != nil {
		return err
	}
	pr.Done, pr.CompletionCode = true, code
	return nil
}

// question is the Question of comparison c issued as id.
func (it *studyItems) question(id string, studyID, participantID int64, c study.Comparison, issued time.Time) *study.Question {
	var q study.Question
	switch c.Format {
	case study.FormatOddOneOut, study.FormatRank:
		q = study.Question{Format: c.Format, Options: make([]study.ItemRef, len(c.Options)), Choose: max(c.Choose, 1)}
		for i, o := range c.Options {
			q.Options[i] = it.ref(o)
		}
		if c.Format == study.FormatRank {
			q.Anchor = it.ref(c.Anchor)
		}
	default:
		q = study.NewTriplet(it.ref(c.Anchor), it.ref(c.Left), it.ref(c.Right))
	}
	q.ID, q.StudyID, q.ParticipantID, q.Design, q.IssuedAt = id, studyID, participantID, c.Design, issued
	q.TextChars = it.textChars
	return &q
}

// issuePlan is the one statement that issues a participant's next question
// on the likely path, sent in the same batch as the writes before it: a
// blind random draw the unique index may refuse, or a design's claim of a
// free slot that may find none. Either way the question's row and the
// participant's hold on it come out of one round trip.
type issuePlan struct {
	id     string
	random study.Comparison // the drawn comparison (random design, or a design's fallback: random.Design)
	trial  string           // DesignCatch or DesignRepeat: the statement returns the comparison
	// trialOptions: the trial's statement returns the items it shows too
	// (an odd-one-out or rank repeat trial, insertFormatRepeatSQL).
	trialOptions bool
	claim        *claim           // a design's claim (its statement returns the comparison)
	design       *DesignScheduler // the claim's design
	key          armKey
	// labeller, when set, is the active design whose fallback the
	// statement labels (fallbackInsert, scanFallback).
	labeller *DesignScheduler
	sql      string
	args     []any
}

// planIssue returns the likely-path statement for the next question of a
// participant who answered `answered` questions, or nil when there is none
// (a random study whose participant was asked most comparisons). Catch and
// repeat trials come first (trialAt), then held-out questions (heldOut),
// then the participant's arm's design.
func (s *Store) planIssue(st studyState, participantID int64, answered, n int) *issuePlan {
	id := secret.NewID()
	switch st.Quality.TrialAt(participantID, answered+1, st.PerParticipant) {
	case study.DesignCatch:
		if st.Format.Format != study.FormatTriplet {
			return st.planFormatCatch(participantID, answered, n, id)
		}
		a, x, swap := study.CatchItems(participantID, answered+1, n)
		return &issuePlan{id: id, trial: study.DesignCatch, sql: insertCatchSQL,
			args: []any{id, st.ID, participantID, a, x, swap, strconv.FormatInt(participantID, 10) + "-" + strconv.Itoa(answered+1)}}
	case study.DesignRepeat:
		if st.Format.Format != study.FormatTriplet {
			return &issuePlan{id: id, trial: study.DesignRepeat, sql: insertFormatRepeatSQL, trialOptions: true,
				random: study.Comparison{Format: st.Format.Format, Choose: st.Format.Choices()},
				args:   []any{id, st.ID, participantID, strconv.FormatInt(participantID, 10)}}
		}
		return &issuePlan{id: id, trial: study.DesignRepeat, sql: insertRepeatSQL,
			args: []any{id, st.ID, participantID, strconv.FormatInt(participantID, 10)}}
	}
	if st.heldOut(participantID, answered) {
		c, ok := blindRandom(n, answered)
		if !ok {
			return nil
		}
		c = st.dress(c, n)
		c.Design = study.DesignHeldout
		sql, args := fallbackInsert(nil, st, participantID, id, c)
		return &issuePlan{id: id, random: c, sql: sql, args: args}
	}
	key := keyOf(st)
	ds, stateful := s.designs[st.Design]
	warming := stateful && ds.warmingUp(key)
	if stateful && !ds.seemsFull(key) && !warming {
		cl := ds.likelyClaim(st, participantID, answered, id)
		return &issuePlan{id: id, claim: &cl, design: ds, key: key, sql: cl.sql, args: cl.args}
	}
	c, ok := blindRandom(n, answered)
	if !ok {
		return nil
	}
	c = st.dress(c, n)
	if warming {
		// A warm-up question, while the design still warms up (else none:
		// the slow path claims from the pool).
		c.Design = study.DesignActive
		return &issuePlan{id: id, random: c, sql: insertWarmupSQL,
			args: []any{id, st.ID, participantID, c.Anchor, c.Left, c.Right, st.Arm, c.Options}}
	}
	// A design with no free slot a moment ago (seemsFull) gets its
	// fallback question at once, as a random study does; so does an active
	// design warming up (its warm-up questions).
	c.Design = study.DesignRandom
	var labeller *DesignScheduler
	if stateful {
		c.Design = study.DesignFallback
		if ds.kind.warmup {
			labeller = ds
		}
	}
	sql, args := fallbackInsert(labeller, st, participantID, id, c)
	return &issuePlan{id: id, random: c, key: key, labeller: labeller, sql: sql, args: args}
}

// planFormatCatch plans the catch trial of an odd-one-out or rank study
// (issue 27) at the participant's question number answered+1: item a
// shown twice beside another item x (odd-one-out: the right answer is x,
// trial.CatchOddOneOut), or the query a among its references (rank: the
// right answer chooses a first, trial.CatchRank). Its key is (a, a, x);
// a participant given that very one before gets an ordinary question.
func (st studyState) planFormatCatch(participantID int64, answered, n int, id string) *issuePlan {
	a, x, _ := study.CatchItems(participantID, answered+1, n)
	c := st.dress(study.Comparison{Anchor: a, Left: a, Right: x}, n)
	if st.Format.Format == study.FormatOddOneOut {
		c.Options = []int{a, a, x}
		rand.Shuffle(3, func(i, j int) { c.Options[i], c.Options[j] = c.Options[j], c.Options[i] })
	}
	return &issuePlan{id: id, trial: study.DesignCatch, random: c, sql: insertFormatCatchSQL,
		args: []any{id, st.ID, participantID, a, a, x, c.Options}}
}

// read reads the plan's row: the comparison and when it was issued, or ok
// = false when the draw was refused or the claim found nothing.
func (p *issuePlan) read(row pgx.Row) (c study.Comparison, issued time.Time, ok bool, err error) {
	if p.claim != nil {
		return p.design.read(*p.claim, p.key, row)
	}
	if p.trial != "" {
		// A trial that found nothing to ask (no answer to repeat, a catch
		// trial the participant had) leaves the number to an ordinary
		// question (issueSlow).
		c = study.Comparison{Design: p.trial, Format: p.random.Format, Options: p.random.Options, Choose: p.random.Choose}
		if p.trialOptions {
			err = row.Scan(&c.Anchor, &c.Left, &c.Right, &issued, &c.Options)
		} else {
			err = row.Scan(&c.Anchor, &c.Left, &c.Right, &issued)
		}
		if errors.Is(err, pgx.ErrNoRows) {
			return study.Comparison{}, time.Time{}, false, nil
		}
		return c, issued, err == nil, err
	}
	c = p.random
	err = scanFallback(row, p.labeller, p.key, &issued, &c.Design)
	if errors.Is(err, pgx.ErrNoRows) {
		return study.Comparison{}, time.Time{}, false, nil
	}
	return c, issued, err == nil, err
}

// batchStep queues statements a caller sends in the batch that issues a
// question, each with the callback that reads its result (QueuedQuery's
// Exec, QueryRow): nextID is the id the likely path gives the new
// question, "" if there is none. The batch reads the results in the order
// they were queued, and stops at the first error.
type batchStep func(b *pgx.Batch, nextID string)

// issue issues the participant's question number `answered` (counting from
// 0) in tx (their row locked) and makes them hold it in slot. pre's
// statements go before the issuing one in the same batch; post's after it,
// and post, when set, must itself make the participant hold nextID in slot
// (slot.sql() otherwise). It returns ErrExhausted when nothing is left to
// ask them.
func (s *Store) issue(ctx context.Context, tx pgx.Tx, st studyState, participantID int64, answered int, items *studyItems,
	pre, post batchStep, slot holdSlot) (*study.Question, error) {
	n := len(items.refs)
	if n < 3 {
		return nil, study.Errorf(study.KindNotOpen, "the study has fewer than three items")
	}
	if st.Format.Format == study.FormatRank && n < st.Format.Rank.N+1 {
		return nil, study.Errorf(study.KindNotOpen, "the study has %d items; a %s trial shows %d", n, st.Format, st.Format.Rank.N+1)
	}
	plan := s.planIssue(st, participantID, answered, n)
	nextID := ""
	if plan != nil {
		nextID = plan.id
	}
	var (
		c      study.Comparison
		issued time.Time
		ok     bool
	)
	b := &pgx.Batch{}
	if pre != nil {
		pre(b, nextID)
	}
	if plan != nil {
		b.Queue(plan.sql, plan.args...).QueryRow(func(row pgx.Row) (err error) {
			c, issued, ok, err = plan.read(row)
			return err
		})
	}
	if post != nil {
		post(b, nextID)
	} else if plan != nil {
		b.Queue(slot.sql(), participantID, plan.id)
	}
	if b.Len() > 0 {
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return nil, err
		}
	}
	if ok {
		return items.question(plan.id, st.ID, participantID, c, issued), nil
	}
	id := secret.NewID()
	c, issued, err := s.issueSlow(ctx, tx, st, participantID, answered, n, id, slot, plan != nil && plan.claim != nil)
	if err != nil {
		return nil, err
	}
	return items.question(id, st.ID, participantID, c, issued), nil
}

// issueSlow issues a question when the likely path found none (claimed:
// it tried a design's claim): a held-out question at a held-out position;
// else a design's free slot or expired lease (takeOver), else a random
// question (recorded as the design's fallback in a design study, or as a
// warm-up question of an active design warming up) among the comparisons
// the participant was not asked; ErrExhausted if there is none.
func (s *Store) issueSlow(ctx context.Context, tx pgx.Tx, st studyState, participantID int64, answered, n int, id string,
	slot holdSlot, claimed bool) (study.Comparison, time.Time, error) {
	design := study.DesignRandom
	var labeller *DesignScheduler // the active design whose fallback insertActiveFallbackSQL labels
	if st.heldOut(participantID, answered) {
		design = study.DesignHeldout
	} else if ds, ok := s.designs[st.Design]; ok {
		c, issued, ok, err := ds.takeOver(ctx, tx, st, participantID, answered, n, id, slot, claimed)
		if err != nil || ok {
			return c, issued, err
		}
		design = study.DesignFallback
		if ds.kind.warmup {
			labeller = ds
		}
		// A design's fallback: first a blind draw, as the random design's
		// likely path does (one round trip), the issue's statement and the
		// hold together.
		if c, ok := blindRandom(n, answered); ok {
			c = st.dress(c, n)
			c.Design = design
			sql, args := fallbackInsert(labeller, st, participantID, id, c)
			b := &pgx.Batch{}
			b.Queue(sql, args...)
			b.Queue(slot.sql(), participantID, id)
			br := tx.SendBatch(ctx, b)
			var issued time.Time
			err := scanFallback(br.QueryRow(), labeller, keyOf(st), &issued, &c.Design)
			if err == nil {
				_, err = br.Exec()
			} else if errors.Is(err, pgx.ErrNoRows) {
				_, err = br.Exec() // refused: the hold set none; the draw below holds its own
				issued = time.Time{}
			}
			if cerr := br.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return study.Comparison{}, time.Time{}, err
			}
			if !issued.IsZero() {
				return c, issued, nil
			}
		}
	}
	asked, err := askedKeys(ctx, tx, participantID)
	if err != nil {
		return study.Comparison{}, time.Time{}, err
	}
	c, err := pickRandom(n, asked)
	if err != nil {
		return study.Comparison{}, time.Time{}, err
	}
	c = st.dress(c, n)
	c.Design = design
	var issued time.Time
	sql, args := fallbackInsert(labeller, st, participantID, id, c)
	if err := scanFallback(tx.QueryRow(ctx, sql, args...), labeller, keyOf(st), &issued, &c.Design); err != nil {
		return study.Comparison{}, time.Time{}, fmt.Errorf("issue a %s question: %w", design, err)
	}
	if _, err := tx.Exec(ctx, slot.sql(), participantID, id); err != nil {
		return study.Comparison{}, time.Time{}, err
	}
	return c, issued, nil
}

// fallbackInsert is the statement that issues random comparison c as
// question id: recorded as c.Design, or labelled by the active design
// labeller (warm-up or fallback) when it is not nil.
func fallbackInsert(labeller *DesignScheduler, st studyState, participantID int64, id string, c study.Comparison) (string, []any) {
	if labeller != nil {
		return insertActiveFallbackSQL, []any{id, st.ID, participantID, c.Anchor, c.Left, c.Right, st.Arm, c.Options}
	}
	return insertQuestionSQL, []any{id, st.ID, participantID, c.Anchor, c.Left, c.Right, c.Design, c.Options}
}

// scanFallback reads fallbackInsert's row: when it was labelled, the
// design recorded (noted for warmingUp).
func scanFallback(r pgx.Row, labeller *DesignScheduler, key armKey, issued *time.Time, design *string) error {
	if labeller == nil {
		return r.Scan(issued)
	}
	if err := r.Scan(issued, design); err != nil {
		return err
	}
	labeller.noteWarming(key, *design == study.DesignActive)
	return nil
}
