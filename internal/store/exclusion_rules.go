package store

// ApplyRulesSQL excludes participant $1, when they are not excluded yet and
// their answers break one of their study's rules, with the reason. It runs
// when they finish, before their completion code is chosen (studyCodeSQL
// gives an excluded participant the screened-out code). The answers are
// read by participant (answers_participant, questions' primary key).
const ApplyRulesSQL = `
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
