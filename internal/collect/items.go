package collect

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/closer-lab/closer/internal/media"
)

// Item is one image of a study. Index is its position 0..n-1 used by the
// algorithms.
type Item struct {
	ID          int64
	StudyID     int64
	Index       int
	Label       string
	FileName    string
	ContentType string
	SHA256      string
	Width       int
	Height      int
}

// ItemRef is what a question shows of an item.
type ItemRef struct {
	Index  int
	Label  string
	SHA256 string
}

// lockStudyForItemsSQL locks a study that is not being deleted and reports
// whether it issued any question (min(), not EXISTS: see
// questionsIssuedSQL). An upload that found the study before it was
// marked deleted finds no row here and stores nothing.
const lockStudyForItemsSQL = `
	SELECT (SELECT min(issued_at) FROM questions WHERE study_id = s.id) IS NOT NULL
	FROM studies s WHERE s.id = $1 AND s.deleted_at IS NULL FOR UPDATE`

// AddItems stores the accepted images of an upload in the study (images
// that media.Check accepted: their type, size and hash come from it). Images
// whose bytes equal another image of the upload or an item already in the
// study are rejected as duplicates. While the study has issued no question,
// all its items are renumbered in natural file-name order; after that, new
// items are appended (indices of answered items never change).
func (s *Store) AddItems(ctx context.Context, studyID int64, imgs []media.Image) ([]Item, []media.Rejection, error) {
	var added []Item
	var rejected []media.Rejection
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		added, rejected = nil, nil
		// Lock the study so concurrent uploads number items one after the other.
		var asked bool
		err := tx.QueryRow(ctx, lockStudyForItemsSQL, studyID).Scan(&asked)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("study")
		}
		if err != nil {
			return err
		}
		type existing struct {
			id   int64
			name string
		}
		var old []existing
		seen := map[string]string{} // sha256 -> file name
		rows, err := tx.Query(ctx, `SELECT id, file_name, sha256 FROM items WHERE study_id = $1 ORDER BY idx`, studyID)
		if err != nil {
			return err
		}
		for rows.Next() {
			var e existing
			var sum string
			if err := rows.Scan(&e.id, &e.name, &sum); err != nil {
				return err
			}
			old = append(old, e)
			seen[sum] = e.name
		}
		if err := rows.Err(); err != nil {
			return err
		}
		fresh := make([]media.Image, 0, len(imgs))
		for _, im := range imgs {
			if prev, dup := seen[im.SHA256]; dup {
				rejected = append(rejected, media.Rejection{Name: im.Name, Reason: "duplicate of " + prev})
				continue
			}
			seen[im.SHA256] = im.Name
			fresh = append(fresh, im)
		}
		media.SortNatural(fresh)
		next := len(old)
		for _, im := range fresh {
			it := Item{StudyID: studyID, Index: next, Label: im.Label, FileName: im.Name,
				ContentType: im.ContentType, SHA256: im.SHA256, Width: im.Width, Height: im.Height}
			// One image's bytes in memory at a time (an upload's images
			// wait in its spool file).
			data, err := im.Bytes()
			if err != nil {
				return err
			}
			if ct, _, ok := media.Sniff(data); !im.Checked() || !ok || ct != im.ContentType {
				return fmt.Errorf("%s: not an image checked by media.Check", im.Name)
			}
			err = tx.QueryRow(ctx, `
				INSERT INTO items (study_id, idx, label, file_name, content_type, sha256, width, height, data)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
				studyID, it.Index+1_000_000_000, it.Label, it.FileName, it.ContentType, it.SHA256, it.Width, it.Height, data).Scan(&it.ID)
			if err != nil {
				return err
			}
			added = append(added, it)
			next++
		}
		if len(added) == 0 {
			return nil
		}
		// Servers keep a study's items in memory by version (items_cache.go).
		if _, err := tx.Exec(ctx, `UPDATE studies SET version = version + 1 WHERE id = $1`, studyID); err != nil {
			return err
		}
		if asked || len(old) == 0 {
			// Append: the new items take indices len(old).. in natural order.
			_, err = tx.Exec(ctx, `UPDATE items SET idx = idx - 1000000000 WHERE study_id = $1 AND idx >= 1000000000`, studyID)
			return err
		}
		// Renumber everything in natural file-name order.
		type named struct {
			id   int64
			name string
			pos  int // position in added, or -1
		}
		all := make([]named, 0, len(old)+len(added))
		for _, e := range old {
			all = append(all, named{e.id, e.name, -1})
		}
		for i, it := range added {
			all = append(all, named{it.ID, it.FileName, i})
		}
		slices.SortStableFunc(all, func(a, b named) int { return media.CompareNatural(a.name, b.name) })
		ids := make([]int64, len(all))
		idx := make([]int32, len(all))
		for i, a := range all {
			ids[i], idx[i] = a.id, int32(i)
			if a.pos >= 0 {
				added[a.pos].Index = i
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE items SET idx = idx + 1000000000 WHERE study_id = $1 AND idx < 1000000000`, studyID); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `
			UPDATE items SET idx = u.idx FROM unnest($1::bigint[], $2::int[]) AS u(id, idx)
			WHERE items.id = u.id`, ids, idx)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("add items: %w", err)
	}
	slices.SortFunc(added, func(a, b Item) int { return a.Index - b.Index })
	return added, rejected, nil
}

// ListItems returns a study's items in index order (without their bytes).
func (s *Store) ListItems(ctx context.Context, studyID int64) ([]Item, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT id, study_id, idx, label, file_name, content_type, sha256, width, height
		FROM items WHERE study_id = $1 ORDER BY idx`, studyID)
	if err != nil {
		return nil, fmt.Errorf("list items: %w", err)
	}
	items, err := pgx.CollectRows(rows, scanItem)
	if err != nil {
		return nil, fmt.Errorf("list items: %w", err)
	}
	return items, nil
}

// scanItem reads an item row of ListItems and ExampleItems.
func scanItem(r pgx.CollectableRow) (Item, error) {
	var it Item
	err := r.Scan(&it.ID, &it.StudyID, &it.Index, &it.Label, &it.FileName, &it.ContentType, &it.SHA256, &it.Width, &it.Height)
	return it, err
}

// ExampleItems returns a study's first n items in index order (without
// their bytes): an example question shown before anyone takes part.
func (s *Store) ExampleItems(ctx context.Context, studyID int64, n int) ([]Item, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT id, study_id, idx, label, file_name, content_type, sha256, width, height
		FROM items WHERE study_id = $1 ORDER BY idx LIMIT $2`, studyID, n)
	if err != nil {
		return nil, fmt.Errorf("example items: %w", err)
	}
	items, err := pgx.CollectRows(rows, scanItem)
	if err != nil {
		return nil, fmt.Errorf("example items: %w", err)
	}
	return items, nil
}

// itemImageSQL reads an image by its sha256 (by name so that
// TestHotQueryPlans explains this very string on a large study).
const itemImageSQL = `SELECT content_type, data FROM items WHERE sha256 = $1 LIMIT 1`

// ItemImage returns the bytes and content type of an image by its sha256
// (images are content-addressed: equal hashes are equal bytes).
func (s *Store) ItemImage(ctx context.Context, sum string) (contentType string, data []byte, err error) {
	err = s.pool.QueryRow(ctx, itemImageSQL, sum).Scan(&contentType, &data)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil, fmt.Errorf("item image: %w", notFound("image"))
	}
	if err != nil {
		return "", nil, fmt.Errorf("item image: %w", err)
	}
	return contentType, data, nil
}
