package collect_test

import (
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
)

// Every PostgreSQL state that says "cannot store now" is unavailability
// (503 with Retry-After), wrapped as the store wraps errors; errors that
// are the request's or a bug's are not.
func TestCannotStoreNowIsUnavailable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		code string
		want bool
	}{
		{"53000", true},  // insufficient_resources
		{"53100", true},  // disk_full
		{"53200", true},  // out_of_memory
		{"53300", true},  // too_many_connections
		{"53400", true},  // configuration_limit_exceeded
		{"25006", true},  // read_only_sql_transaction
		{"57P03", true},  // cannot_connect_now
		{"58030", true},  // io_error
		{"57P01", true},  // admin_shutdown (was already)
		{"08006", true},  // connection_failure (was already)
		{"23505", false}, // unique_violation
		{"22P02", false}, // invalid_text_representation
		{"42601", false}, // syntax_error
		{"57014", false}, // query_canceled: the request's own deadline
		{"40001", false}, // serialization_failure: retried where it can happen
		{"25P02", false}, // in_failed_sql_transaction: a bug
	} {
		err := fmt.Errorf("record answer %d: %w", 7, &pgconn.PgError{Code: c.code, Message: "x"})
		if got := collect.KindOf(err) == study.KindUnavailable; got != c.want {
			t.Errorf("SQLSTATE %s: unavailable %t, want %t", c.code, got, c.want)
		}
		if got := collect.IsUnavailable(err); got != c.want {
			t.Errorf("SQLSTATE %s: IsUnavailable %t, want %t", c.code, got, c.want)
		}
	}
}
