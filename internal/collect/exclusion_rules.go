package collect

// ExclusionRules exclude a participant automatically when they finish: one
// who answered faster than FastMS more often than MaxFastShare of the
// time, or chose the option on one side (left or right) more often than
// MaxSideShare of the time, or (studies with catch or repeat trials)
// chose the right option of fewer than MinCatchAccuracy of their catch
// trials (a skipped one counts as wrong) or the same option in fewer than
// MinConsistency of their repeat trials (skipped ones do not count). A zero
// share turns its rule off; a participant without such trials is never
// excluded by their rule. The excluded
// participant gets the study's screened-out code when it has one (on
// Prolific: the screened-out completion path); their answers stay stored
// but leave recompute and the default export, as for a participant the
// researcher excluded. Stored as studies.exclusion.
type ExclusionRules struct {
	FastMS       int     `json:"fast_ms,omitempty"`
	MaxFastShare float64 `json:"max_fast_share,omitempty"`
	MaxSideShare float64 `json:"max_side_share,omitempty"`
	// MinCatchAccuracy and MinConsistency are shares (0..1).
	MinCatchAccuracy float64 `json:"min_catch_accuracy,omitempty"`
	MinConsistency   float64 `json:"min_consistency,omitempty"`
}

// checkExclusionRules returns a user-facing error naming the first rule r
// breaks.
func checkExclusionRules(r ExclusionRules) error {
	switch {
	case r.MaxFastShare < 0 || r.MaxFastShare >= 1:
		return userErr(KindInvalid, "the share of very fast answers that excludes must be between 0%% (off) and 99%%")
	case r.MaxFastShare > 0 && (r.FastMS < 1 || r.FastMS > 60_000):
		return userErr(KindInvalid, "a very fast answer must be faster than 1 to 60000 ms")
	case r.MaxFastShare == 0 && (r.FastMS < 0 || r.FastMS > 60_000):
		return userErr(KindInvalid, "a very fast answer must be faster than 1 to 60000 ms")
	case r.MaxSideShare != 0 && (r.MaxSideShare <= 0.5 || r.MaxSideShare >= 1):
		return userErr(KindInvalid, "the share of answers on one side that excludes must be above 50%% and below 100%% (or 0: off)")
	case r.MinCatchAccuracy < 0 || r.MinCatchAccuracy > 1:
		return userErr(KindInvalid, "the catch-trial accuracy below which a participant is excluded must be between 0%% (off) and 100%%")
	case r.MinConsistency < 0 || r.MinConsistency > 1:
		return userErr(KindInvalid, "the self-consistency below which a participant is excluded must be between 0%% (off) and 100%%")
	}
	return nil
}

// applyRulesSQL excludes participant $1, when they are not excluded yet and
// their answers break one of their study's rules, with the reason. It runs
// when they finish, before their completion code is chosen (studyCodeSQL
// gives an excluded participant the screened-out code). The answers are
// read by participant (answers_participant, questions' primary key).
const applyRulesSQL = `
	WITH r AS (
		SELECT coalesce((s.exclusion->>'fast_ms')::int, 0) AS fast_ms,
			coalesce((s.exclusion->>'max_fast_share')::float8, 0) AS max_fast,
			coalesce((s.exclusion->>'max_side_share')::float8, 0) AS max_side,
			coalesce((s.exclusion->>'min_catch_accuracy')::float8, 0) AS min_catch,
			coalesce((s.exclusion->>'min_consistency')::float8, 0) AS min_same
		FROM participants p JOIN studies s ON s.id = p.study_id
		WHERE p.id = $1 AND p.excluded_at IS NULL AND s.exclusion <> '{}'
	), f AS MATERIALIZED (
		SELECT r.*,
			(SELECT avg((a.response_ms < r.fast_ms)::int) FROM answers a
				WHERE a.participant_id = $1 AND a.response_ms IS NOT NULL AND r.max_fast > 0) AS fast,
			(SELECT avg((a.closer = q.left_idx)::int) FROM answers a JOIN questions q ON q.id = a.question_id
				WHERE a.participant_id = $1 AND r.max_side > 0) AS left_share,
			(SELECT avg(coalesce(t.correct, false)::int) FROM trial_answers t JOIN questions q ON q.id = t.question_id
				WHERE t.participant_id = $1 AND q.design = 'catch' AND r.min_catch > 0) AS catch_accuracy,
			(SELECT avg(t.correct::int) FROM trial_answers t JOIN questions q ON q.id = t.question_id
				WHERE t.participant_id = $1 AND q.design = 'repeat' AND t.correct IS NOT NULL AND r.min_same > 0) AS consistency
		FROM r
	), why AS (
		SELECT CASE
			WHEN max_fast > 0 AND fast > max_fast THEN
				format('%s%% of the answers faster than %s ms (the limit is %s%%)', round(fast * 100), fast_ms, round(max_fast * 100))
			WHEN max_side > 0 AND greatest(left_share, 1 - left_share) > max_side THEN
				format('%s%% of the answers on the %s (the limit is %s%%)', round(greatest(left_share, 1 - left_share) * 100),
					CASE WHEN left_share >= 0.5 THEN 'left' ELSE 'right' END, round(max_side * 100))
			WHEN min_catch > 0 AND catch_accuracy < min_catch THEN
				format('%s%% of the catch trials right (the minimum is %s%%)', round(catch_accuracy * 100), round(min_catch * 100))
			WHEN min_same > 0 AND consistency < min_same THEN
				format('%s%% of the repeated questions answered the same way (the minimum is %s%%)', round(consistency * 100), round(min_same * 100))
		END AS reason
		FROM f
	)
	UPDATE participants SET excluded_at = now(), excluded_reason = why.reason
	FROM why WHERE participants.id = $1 AND why.reason IS NOT NULL`
