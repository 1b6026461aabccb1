package collect

import "github.com/jackc/pgx/v5/pgxpool"

// PoolOf gives the tests of package collect_test the store's pool, to set
// up rows and check them with their own SQL. Tests only: no code outside
// the store reaches its pool.
func PoolOf(s *Store) *pgxpool.Pool { return s.pool }
