package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// activePoolsDueSQL: the open studies (not being deleted) with an active
// arm whose pool needs a refresh, and whose design state changed since
// the study's last run started (a run that started later read it): the
// warm-up is over (the design recorded at least its warm-up's answers)
// and either no pool was installed yet or the pool is used up to half
// (the answers it still wants, pool_left, at most half of pool_size ×
// repeats, what it wanted when installed). A pool that a refresh left
// empty (every comparison asked) is not due by this rule.
const activePoolsDueSQL = `
	SELECT DISTINCT s.id
	FROM design_states d
	JOIN studies s ON s.id = d.study_id
	LEFT JOIN LATERAL (SELECT r.started_at FROM recompute_runs r WHERE r.study_id = s.id
		ORDER BY r.id DESC LIMIT 1) last ON true
	CROSS JOIN LATERAL (SELECT coalesce((d.progress -> 'active' ->> 'warmup')::bigint, 0) AS warmup,
		coalesce((d.progress -> 'active' ->> 'refreshes')::bigint, 0) AS refreshes,
		coalesce((d.progress -> 'active' ->> 'pool_size')::bigint, 0) AS pool_size,
		coalesce((d.progress -> 'active' ->> 'pool_left')::bigint, 0) AS pool_left,
		greatest(coalesce((d.config ->> 'repeats')::bigint, 1), 1) AS repeats) p
	WHERE d.design = 'active' AND s.status = 'open' AND s.deleted_at IS NULL
		AND d.updated_at > coalesce(last.started_at, '-infinity')
		AND d.version >= p.warmup
		AND (p.refreshes = 0 OR (p.pool_size > 0 AND 2 * p.pool_left <= p.pool_size * p.repeats))
	ORDER BY s.id`

// ActivePoolsDue returns the open studies with an active arm whose pool of
// scored questions runs low (issue 16): its warm-up is over and it has no
// pool yet, or its pool is used up to half, and its state changed since
// the study's last recompute started. The recompute's periodic scan
// enqueues them beside DueStudies, so a busy active arm is refreshed as
// its pool empties, not only every min_new_answers answers.
func (s *Store) ActivePoolsDue(ctx context.Context) (_ []int64, err error) {
	defer wrap(&err, "store.ActivePoolsDue()")
	rows, err := s.pool.Query(ctx, activePoolsDueSQL)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}
