package collect

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"github.com/closer-lab/closer/internal/cache"
	"github.com/closer-lab/closer/internal/secret"
	"github.com/closer-lab/closer/internal/store"
	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgx/v5"
)

var (
	// ErrExternalIDRequired refuses a join without an external id to a
	// study on a recruiting platform (Platform.RequiresID): an anonymous
	// participant would escape "one participant per id" and the exclusion
	// of earlier studies' participants.
	ErrExternalIDRequired = &study.Error{Kind: study.KindInvalid,
		Msg: "this study takes its participants from a recruiting platform: a participant joins only with their id on it (the external id)"}
	// ErrCompletedOtherAssignment refuses an MTurk worker who completed
	// the study and comes back on another assignment (another HIT of the
	// study): their participant keeps the assignment they completed, so
	// the new one is never submitted with their code and paid a second
	// time.
	ErrCompletedOtherAssignment = &study.Error{Kind: study.KindConflict,
		Msg: "this worker already completed the study on another assignment; return this HIT"}
)

// joinSQL adds a participant, unless one with this external id ($4, when
// not empty) joined the study before: then it returns nothing, and
// resumeSQL finds that one. Two joins with one id at once make one
// participant: the second waits on the first's row in the unique index
// participants_external_key and then finds it. resumeSQL finds nothing
// either when the participant completed the study on another MTurk
// assignment than $5 (when not empty; a participant without a kept
// assignment is let in): the row, its parameters included, is left as it
// is and no token is added (ErrCompletedOtherAssignment). The UPDATE
// checks that on the row it locked, so a completion committed meanwhile
// counts.
const (
	joinSQL = `
		INSERT INTO participants (public_id, study_id, token_hash, external_id, external_key, platform_params, last_active_at)
		VALUES ($1, $2, $3, nullif($4, ''), nullif($4, ''), $5, now())
		ON CONFLICT (study_id, external_key) DO NOTHING
		RETURNING id, created_at`
	resumeSQL = `
		WITH p AS (
			UPDATE participants SET platform_params = coalesce(platform_params || $4, $4, platform_params), last_active_at = now()
			WHERE study_id = $1 AND external_key = $2
				AND ($5 = '' OR completed_at IS NULL OR coalesce(platform_params->>'assignmentId', $5) = $5)
			RETURNING id, public_id, coalesce(completion_code, '') AS code, created_at, completed_at, arm
		), t AS (
			INSERT INTO participant_tokens (token_hash, participant_id) SELECT $3, id FROM p
		)
		SELECT id, public_id, code, created_at, completed_at, arm FROM p`
	// tookPartElsewhereSQL: whether external id $2, new to study $1, took
	// part in one of the studies $1 refuses the participants of.
	tookPartElsewhereSQL = `
		SELECT EXISTS (SELECT 1 FROM studies s JOIN participants p ON p.study_id = ANY (s.exclude_studies) AND p.external_key = $2
			WHERE s.id = $1)
		AND NOT EXISTS (SELECT 1 FROM participants WHERE study_id = $1 AND external_key = $2)`
	// completedOtherAssignmentSQL: whether external id $2 completed study
	// $1 on another MTurk assignment than $3 (resumeSQL's rule).
	completedOtherAssignmentSQL = `
		SELECT EXISTS (SELECT 1 FROM participants WHERE study_id = $1 AND external_key = $2
			AND completed_at IS NOT NULL AND coalesce(platform_params->>'assignmentId', $3) <> $3)`
	// externalKnownSQL: whether external id $2 joined study $1 before.
	externalKnownSQL = `SELECT EXISTS (SELECT 1 FROM participants WHERE study_id = $1 AND external_key = $2)`
	// takingPartSQL counts study $1's participants who completed or are in
	// progress: active within the last $2 minutes (0: ever); with $3 (a
	// study on a recruiting platform) only those who answered at least
	// once (takingPartAnswered). A preview session takes no place.
	takingPartSQL = `
		SELECT count(*) FROM participants WHERE study_id = $1 AND NOT preview
			AND (NOT $3 OR answered > 0 OR completed_at IS NOT NULL)
			AND (completed_at IS NOT NULL OR $2 = 0
				OR coalesce(last_active_at, created_at) > now() - make_interval(mins => $2))`
	// revokeOldTokensSQL deletes participant $1's tokens from
	// participant_tokens past the newest $2, returning their hashes.
	revokeOldTokensSQL = `
		DELETE FROM participant_tokens WHERE token_hash IN (
			SELECT token_hash FROM participant_tokens WHERE participant_id = $1
			ORDER BY created_at DESC, token_hash OFFSET $2)
		RETURNING token_hash`
)

// MaxTokensPerParticipant bounds a participant's live tokens. Each resume
// (their external id joining again, from another browser) adds one; past
// the bound the oldest given on a resume is revoked, so that the one who
// resumes now always gets in while repeated joins with one id (7,430 in
// 15 s from one client) store nothing more. The participant's first token
// is kept.
const MaxTokensPerParticipant = 20

// takingPartAnswered says whether a study's quota counts only the
// participants who answered at least one question: a study on a recruiting
// platform takes any id the link carries, and invented ids that answer
// nothing must not fill its places. A study without a platform counts every
// participant who joined (joins are limited per client address instead).
func takingPartAnswered(pl study.Platform) bool { return pl.RequiresID() }

// quotaLockSQL serialises the joins of a study with a quota (an advisory
// lock held until the transaction ends; the first key says what it is for),
// so that two joins never both take the last place.
const quotaLockSQL = `SELECT pg_advisory_xact_lock(1946, ($1 % 2147483647)::int)`

// keptParams checks and trims the link parameters kept with a
// participant (at most 8, each name and value at most MaxPlatformParamLen
// characters); empty values are left out, and none left is nil (NULL).
func keptParams(params map[string]string) (map[string]string, error) {
	var kept map[string]string
	for k, v := range params {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		if len(k) > store.MaxPlatformParamLen || len(v) > store.MaxPlatformParamLen || len(params) > 8 {
			return nil, study.Errorf(study.KindInvalid, "the link parameter %.40q is too long (at most %d characters)", k, store.MaxPlatformParamLen)
		}
		if kept == nil {
			kept = map[string]string{}
		}
		kept[k] = v
	}
	return kept, nil
}

// CreateParticipant adds a participant to an open study and returns them with
// a secret token. An external id that joined the study before resumes that
// participant instead (Resumed is set): they get a new token, which works
// beside the earlier one, and keep their progress and completion code.
// params are the platform's link parameters kept with the participant
// (Platform.KeptParams; a resumed participant's are updated with those
// given). In a study with arms the participant is assigned to one
// (design.NextArm, from the study's counts of participants per arm, locked
// for the transaction so that concurrent joins take turns); a resumed
// participant keeps theirs.
//
// A study on a recruiting platform takes no participant without an
// external id (ErrExternalIDRequired). On MTurk, a worker who completed the
// study and comes back with another assignmentId in params is refused
// (ErrCompletedOtherAssignment) and nothing about them changes; one who
// has not completed it resumes on the new assignment (they returned the
// first HIT).
func (s *Store) CreateParticipant(ctx context.Context, studyID int64, externalID string, params map[string]string) (study.Participant, string, error) {
	externalID = strings.TrimSpace(externalID)
	if len(externalID) > study.MaxExternalIDLen {
		return study.Participant{}, "", fmt.Errorf("create participant: %w",
			study.Errorf(study.KindInvalid, "the external id is longer than %d characters", study.MaxExternalIDLen))
	}
	kept, err := keptParams(params)
	if err != nil {
		return study.Participant{}, "", fmt.Errorf("create participant: %w", err)
	}
	token := secret.NewToken()
	p := study.Participant{PublicID: secret.NewID(), StudyID: studyID, ExternalID: externalID}
	var revoked [][]byte // token hashes the resume revoked
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var status string
		var q study.Quota
		var arms []study.Arm
		var pl study.Platform
		err := tx.QueryRow(ctx, `SELECT status, max_participants, idle_minutes, arms, coalesce(platform->>'kind', '') FROM studies WHERE id = $1 FOR SHARE`, studyID).
			Scan(&status, &q.MaxParticipants, &q.IdleMinutes, &arms, &pl.Kind)
		if errors.Is(err, pgx.ErrNoRows) {
			return study.NotFound("study")
		}
		if err != nil {
			return err
		}
		if status != study.StatusOpen {
			return study.Errorf(study.KindNotOpen, "the study is %s", status)
		}
		if externalID == "" && pl.RequiresID() {
			return ErrExternalIDRequired
		}
		if q.MaxParticipants > 0 {
			if err := checkQuota(ctx, tx, studyID, externalID, q, takingPartAnswered(pl)); err != nil {
				return err
			}
		}
		if externalID != "" {
			var tookPart bool
			if err := tx.QueryRow(ctx, tookPartElsewhereSQL, studyID, externalID).Scan(&tookPart); err != nil {
				return err
			}
			if tookPart {
				return study.Errorf(study.KindForbidden, "this participant id took part in a related study, which this study does not admit")
			}
		}
		if len(arms) > 0 {
			if p.Arm, err = store.NextArm(ctx, tx, studyID, arms); err != nil {
				return err
			}
			err = tx.QueryRow(ctx, store.JoinArmSQL, p.PublicID, studyID, secret.Hash(token), externalID, kept, p.Arm).Scan(&p.ID, &p.CreatedAt)
		} else {
			err = tx.QueryRow(ctx, joinSQL, p.PublicID, studyID, secret.Hash(token), externalID, kept).Scan(&p.ID, &p.CreatedAt)
		}
		if !errors.Is(err, pgx.ErrNoRows) || externalID == "" {
			return err
		}
		p.Resumed = true
		var assignment string // only an MTurk study's assignments are told apart
		if pl.Kind == study.PlatformMTurk {
			assignment = kept["assignmentId"]
		}
		err = tx.QueryRow(ctx, resumeSQL, studyID, externalID, secret.Hash(token), kept, assignment).
			Scan(&p.ID, &p.PublicID, &p.CompletionCode, &p.CreatedAt, &p.CompletedAt, &p.Arm)
		if errors.Is(err, pgx.ErrNoRows) && assignment != "" {
			return ErrCompletedOtherAssignment
		}
		if err != nil {
			return err
		}
		// resumeSQL locked the participant's row: resumes of one
		// participant take turns, and this statement sees the tokens of
		// those committed before.
		revoked, err = revokeOldTokens(ctx, tx, p.ID)
		return err
	})
	if err != nil {
		return study.Participant{}, "", fmt.Errorf("create participant: %w", err)
	}
	for _, h := range revoked {
		s.identities.forgetKey(h)
	}
	return p, token, nil
}

// revokeOldTokens deletes participant id's tokens past
// MaxTokensPerParticipant (the first, on their row, counts as one) and
// returns their hashes.
func revokeOldTokens(ctx context.Context, tx pgx.Tx, id int64) ([][]byte, error) {
	rows, err := tx.Query(ctx, revokeOldTokensSQL, id, MaxTokensPerParticipant-1)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[[]byte])
}

// checkQuota refuses a new participant once the study's quota is taken
// (KindFull); a returning external id is always let back in. answered
// counts only the participants who answered (takingPartAnswered).
func checkQuota(ctx context.Context, tx pgx.Tx, studyID int64, externalID string, q study.Quota, answered bool) error {
	if _, err := tx.Exec(ctx, quotaLockSQL, studyID); err != nil {
		return err
	}
	if externalID != "" {
		var known bool
		if err := tx.QueryRow(ctx, externalKnownSQL, studyID, externalID).Scan(&known); err != nil || known {
			return err
		}
	}
	var n int
	if err := tx.QueryRow(ctx, takingPartSQL, studyID, q.IdleMinutes, answered).Scan(&n); err != nil {
		return err
	}
	if n >= q.MaxParticipants {
		return study.Errorf(study.KindFull, "the study is full: %d people have taken part or are taking part", n)
	}
	return nil
}

// The SQL of the participant lookups, by name so that TestHotQueryPlans
// explains these very strings on a large study.
const (
	// participantByTokenSQL: the participant's first token is on its row,
	// tokens given on resuming are in participant_tokens.
	participantByTokenSQL = `
		SELECT id, public_id, study_id, external_id, completion_code, created_at, completed_at, arm, preview
		FROM participants WHERE token_hash = $1
		UNION ALL
		SELECT p.id, p.public_id, p.study_id, p.external_id, p.completion_code, p.created_at, p.completed_at, p.arm, p.preview
		FROM participant_tokens t JOIN participants p ON p.id = t.participant_id WHERE t.token_hash = $1
		LIMIT 1`
	// listParticipantsSQL: the newest $2 participants of study $1 with
	// their answer counts (triplets and trial_answers) and their trials.
	listParticipantsSQL = `
		SELECT p.id, p.public_id, p.study_id, coalesce(p.external_id, ''), coalesce(p.completion_code, ''),
			p.created_at, p.completed_at, count(a.question_id) + t.n, greatest(max(a.answered_at), t.last),
			p.platform_params, p.excluded_at IS NOT NULL, coalesce(p.excluded_reason, ''),
			t.skipped, t.catches, t.caught, t.repeats, t.same, p.arm, p.preview
		FROM participants p LEFT JOIN answers a ON a.participant_id = p.id
		CROSS JOIN LATERAL ` + store.TrialFiguresSQL + ` t
		WHERE p.study_id = $1
		GROUP BY p.id, t.n, t.last, t.skipped, t.catches, t.caught, t.repeats, t.same
		ORDER BY p.id DESC
		LIMIT $2`
)

// participantByToken returns the participant whose secret token this is,
// progress included.
func (s *Store) participantByToken(ctx context.Context, token string) (study.Participant, error) {
	var p study.Participant
	var ext, code *string
	err := s.pool.QueryRow(ctx, participantByTokenSQL, secret.Hash(token)).
		Scan(&p.ID, &p.PublicID, &p.StudyID, &ext, &code, &p.CreatedAt, &p.CompletedAt, &p.Arm, &p.Preview)
	if errors.Is(err, pgx.ErrNoRows) {
		return study.Participant{}, fmt.Errorf("participant by token: %w", study.Errorf(study.KindUnauthorized, "unknown participant token"))
	}
	if err != nil {
		return study.Participant{}, fmt.Errorf("participant by token: %w", err)
	}
	if ext != nil {
		p.ExternalID = *ext
	}
	if code != nil {
		p.CompletionCode = *code
	}
	return p, nil
}

// AuthenticateParticipant returns who holds this secret token: the
// participant's identity (ID, PublicID, StudyID, ExternalID, CreatedAt,
// Preview),
// which never changes, without their progress (CompletionCode and
// CompletedAt are empty; Next has them). Every question and answer asks
// it, so a process keeps the identities it found (identityCache): after
// the first request of a participant it costs no query.
func (s *Store) AuthenticateParticipant(ctx context.Context, token string) (study.Participant, error) {
	key := sha256.Sum256([]byte(token))
	if p, ok := s.identities.get(key); ok {
		return p, nil
	}
	p, err := s.participantByToken(ctx, token)
	if err != nil {
		return study.Participant{}, err
	}
	p.CompletionCode, p.CompletedAt = "", nil
	s.identities.put(key, p)
	return p, nil
}

// identityCache keeps participants' identities by the sha256 of their
// token. Unknown tokens are not kept (a stranger's guesses cost memory
// nothing); past maxIdentities the least recently seen identity goes.
type identityCache struct {
	byHash *cache.LRU[[sha256.Size]byte, study.Participant]
}

// maxIdentities bounds the cached identities (about 150 bytes each).
const maxIdentities = 100_000

func newIdentityCache() identityCache {
	return identityCache{byHash: cache.New[[sha256.Size]byte, study.Participant](maxIdentities)}
}

func (c *identityCache) get(k [sha256.Size]byte) (study.Participant, bool) {
	return c.byHash.Get(k)
}

// forget drops the identity of a participant that is gone (a purged study).
func (c *identityCache) forget(participantID int64) {
	c.byHash.RemoveFunc(func(_ [sha256.Size]byte, p study.Participant) bool { return p.ID == participantID })
}

// gone is the error for a participant whose row no longer exists (its study
// was deleted and purged): like an unknown token, and its cached identity
// is dropped.
func (s *Store) gone(participantID int64) error {
	s.identities.forget(participantID)
	return study.Errorf(study.KindUnauthorized, "unknown participant token")
}

// forgetKey drops the identity cached for a token's hash (a revoked token).
func (c *identityCache) forgetKey(hash []byte) {
	var k [sha256.Size]byte
	if copy(k[:], hash) != len(k) {
		return
	}
	c.byHash.Remove(k)
}

func (c *identityCache) put(k [sha256.Size]byte, p study.Participant) {
	c.byHash.Add(k, p)
}

// ListParticipants returns the study's most recent participants (at most
// limit) with their answer counts, newest first.
func (s *Store) ListParticipants(ctx context.Context, studyID int64, limit int) ([]study.ParticipantRow, error) {
	rows, err := s.pool.Query(ctx, listParticipantsSQL, studyID, limit)
	if err != nil {
		return nil, fmt.Errorf("list participants: %w", err)
	}
	ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (study.ParticipantRow, error) {
		var p study.ParticipantRow
		err := r.Scan(&p.ID, &p.PublicID, &p.StudyID, &p.ExternalID, &p.CompletionCode,
			&p.CreatedAt, &p.CompletedAt, &p.Answered, &p.LastAnswer, &p.PlatformParams, &p.Excluded, &p.ExcludedReason,
			&p.Skipped, &p.CatchTrials, &p.CatchCorrect, &p.RepeatTrials, &p.RepeatSame, &p.Arm, &p.Preview)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("list participants: %w", err)
	}
	return ps, nil
}

// studyCodeSQL is the code the study of the participants row being updated
// gives everyone who finishes (Platform): its screened-out code to an
// excluded participant when it has one, else its completion code; NULL
// when each participant gets a random code of their own. CASE evaluates it
// only for a participant who finishes.
const studyCodeSQL = `(SELECT CASE WHEN participants.excluded_at IS NOT NULL AND s.platform->>'screened_out_code' <> ''
		THEN s.platform->>'screened_out_code' ELSE nullif(s.platform->>'completion_code', '') END
	FROM studies s WHERE s.id = participants.study_id)`

// completeSQL gives a participant a completion code (the study's, else $2)
// and marks them done, once: a participant who holds a code keeps it and
// its time. It returns the code they hold.
const completeSQL = `
	UPDATE participants SET completion_code = coalesce(completion_code, ` + studyCodeSQL + `, $2),
		completed_at = coalesce(completed_at, now())
	WHERE id = $1 RETURNING completion_code`

// completeParticipant marks the participant done (completeSQL) and returns
// their completion code. Two at once agree: the second UPDATE waits on the
// first one's row lock and then keeps the code it wrote.
func completeParticipant(ctx context.Context, tx pgx.Tx, participantID int64) (string, error) {
	if _, err := tx.Exec(ctx, store.ApplyRulesSQL, participantID); err != nil {
		return "", fmt.Errorf("complete participant: exclusion rules: %w", err)
	}
	var code string
	if err := tx.QueryRow(ctx, completeSQL, participantID, newCompletionCode()).Scan(&code); err != nil {
		return "", fmt.Errorf("complete participant: %w", err)
	}
	return code, nil
}

// ParticipantPlatformParams returns the platform's link parameters kept
// with a participant (nil when none were given): an MTurk participant's
// last page reads where to submit their assignment from them.
func (s *Store) ParticipantPlatformParams(ctx context.Context, participantID int64) (map[string]string, error) {
	var params map[string]string
	err := s.pool.QueryRow(ctx, `SELECT platform_params FROM participants WHERE id = $1`, participantID).Scan(&params)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("participant platform params: %w", s.gone(participantID))
	}
	if err != nil {
		return nil, fmt.Errorf("participant platform params: %w", err)
	}
	return params, nil
}
