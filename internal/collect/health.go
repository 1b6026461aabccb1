package collect

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// probeFresh is how long a successful write probe stands for the next
// ones: a flood of /healthz (it is anonymous) costs at most two probe
// writes (each a new file and a pg_class update) per second per process,
// and an outage shows within half a second. Failures are not kept, so
// recovery shows at once.
const probeFresh = 500 * time.Millisecond

// probeLockWait bounds the probe's wait for its table's lock: a backup
// (pg_dump holds a share lock on every table while it runs) must not turn
// the health check red.
const probeLockWait = "500ms"

// WriteProbe checks that the database takes writes now, as the answers
// need it to: in one transaction it empties health_probe (TRUNCATE gives
// it a new, empty file) and writes a row there, which must allocate a
// page. It fails when the database cannot be reached, is read-only (a
// standby, default_transaction_read_only: SQLSTATE 25006), is out of disk
// (53100) or of other resources. While a backup holds the table, it
// writes the row without emptying the table (no disk check then). Errors
// are the database's, wrapped; CannotStoreNow and IsUnavailable classify
// them.
func (s *Store) WriteProbe(ctx context.Context) error {
	select {
	case s.probe.turn <- struct{}{}:
		defer func() { <-s.probe.turn }()
	case <-ctx.Done():
		return ctx.Err()
	}
	if time.Since(s.probe.okAt) < probeFresh {
		return nil
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '`+probeLockWait+`'`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `TRUNCATE health_probe`)
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == pgerrcode.LockNotAvailable {
			return errProbeLocked
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO health_probe (probed_at) VALUES (now())`)
		return err
	})
	if errors.Is(err, errProbeLocked) {
		_, err = s.pool.Exec(ctx, `INSERT INTO health_probe (probed_at) VALUES (now())`)
	}
	if err != nil {
		return fmt.Errorf("write probe: %w", err)
	}
	s.probe.okAt = time.Now()
	return nil
}

var errProbeLocked = errors.New("health_probe is locked")

// probeState serialises the write probes and keeps the last success.
type probeState struct {
	turn chan struct{} // one probe at a time
	okAt time.Time     // the last successful probe (guarded by turn)
}

// CannotStoreReason names, for a health check, why err says the database
// cannot store now ("disk full", "read-only", ...), or "unavailable".
func CannotStoreReason(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == pgerrcode.DiskFull:
			return "disk full"
		case pe.Code == pgerrcode.ReadOnlySQLTransaction:
			return "read-only"
		case pe.Code == pgerrcode.OutOfMemory:
			return "out of memory"
		case pe.Code == pgerrcode.TooManyConnections:
			return "too many connections"
		case pe.Code == pgerrcode.IOError:
			return "I/O error"
		case pgerrcode.IsInsufficientResources(pe.Code):
			return "out of resources"
		}
	}
	return "unavailable"
}
