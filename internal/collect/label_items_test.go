package collect

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// InsertLabelItems stores n items 0..n-1 of studyID straight into the
// items table, each with a one-byte image and a hash of its own, for the
// design tests that need many items fast (AddItems checks real images).
// It is exported for the external tests of the package (collect_test).
func InsertLabelItems(t testing.TB, pool *pgxpool.Pool, studyID int64, n int) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `
		INSERT INTO items (study_id, idx, label, file_name, content_type, sha256, width, height, data)
		SELECT $1::bigint, g, 'item' || g, 'item' || g || '.png', 'image/png', md5($1::bigint::text || '-' || g), 1, 1, '\x00'
		FROM generate_series(0, $2 - 1) g`, studyID, n); err != nil {
		t.Fatalf("insert %d items of study %d: %v", n, studyID, err)
	}
}
