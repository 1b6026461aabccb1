package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/closer-lab/closer/internal/avfile"
	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/study"
	"github.com/jackc/pgx/v5"
)

// lockStudyForItemsSQL locks a study that is not being deleted and reports
// whether it issued any question (min(), not EXISTS: see
// questionsIssuedSQL). An upload that found the study before it was
// marked deleted finds no row here and stores nothing. Unlike
// questionsIssuedSQL it counts preview sessions' questions: renumbering
// the items would make their stored answers name other items.
const lockStudyForItemsSQL = `
	SELECT (SELECT min(issued_at) FROM questions WHERE study_id = s.id) IS NOT NULL
	FROM studies s WHERE s.id = $1 AND s.deleted_at IS NULL FOR UPDATE`

// ItemLimits bound the image bytes one upload stores and the image bytes a
// study holds in all (zero: no bound). A zip compresses well what an image
// format does not (padding, metadata), so an upload's stored bytes are
// bounded here, on what is kept, not only on what was sent.
type ItemLimits struct {
	MaxUploadBytes int64 // the images one AddItems stores
	MaxStudyBytes  int64 // the images of the study, stored before and now
}

// itemsStoredSQL is the bytes of a study's images (octet_length reads a
// stored value's size from its header, not the value).
const itemsStoredSQL = `SELECT coalesce(sum(octet_length(data)), 0) FROM items WHERE study_id = $1`

// AddItems stores the accepted images of an upload in the study (images
// that media.Check accepted: their type, size and hash come from it). Images
// whose bytes equal another image of the upload or an item already in the
// study are rejected as duplicates. While the study has issued no question,
// all its items are renumbered in natural file-name order; after that, new
// items are appended (indices of answered items never change).
func (s *Store) AddItems(ctx context.Context, studyID int64, imgs []media.Image) (_ []study.Item, _ []media.Rejection, err error) {
	defer wrap(&err, "store.AddItems(%d, %d images)", studyID, len(imgs))
	return s.addItems(ctx, studyID, imgs, ItemLimits{})
}

// AddItemsWithin is AddItems within lim: in natural file-name order, the
// images that would take the upload or the study past its bound are
// rejected with the reason, and the others stored.
func (s *Store) AddItemsWithin(ctx context.Context, studyID int64, imgs []media.Image, lim ItemLimits) (_ []study.Item, _ []media.Rejection, err error) {
	defer wrap(&err, "store.AddItemsWithin(%d, %d images)", studyID, len(imgs))
	return s.addItems(ctx, studyID, imgs, lim)
}

// addItems is AddItemsWithin, its errors not wrapped.
func (s *Store) addItems(ctx context.Context, studyID int64, imgs []media.Image, lim ItemLimits) ([]study.Item, []media.Rejection, error) {
	for _, im := range imgs {
		// media.Check refuses these; a caller that built an Image by
		// other means stores nothing.
		if err := media.CheckFileName(im.Name); err != nil {
			return nil, nil, study.Errorf(study.KindInvalid, "%s: %v", media.ShortName(im.Name), err)
		}
	}
	var added []study.Item
	var rejected []media.Rejection
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		added, rejected = nil, nil
		// Lock the study so concurrent uploads number items one after the other.
		var asked bool
		err := tx.QueryRow(ctx, lockStudyForItemsSQL, studyID).Scan(&asked)
		if errors.Is(err, pgx.ErrNoRows) {
			return study.NotFound("study")
		}
		if err != nil {
			return err
		}
		if err := checkUploadKinds(ctx, tx, studyID, imgs); err != nil {
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
		var studyBytes, uploadBytes int64
		if lim.MaxStudyBytes > 0 {
			if err := tx.QueryRow(ctx, itemsStoredSQL, studyID).Scan(&studyBytes); err != nil {
				return err
			}
		}
		next := len(old)
		for _, im := range fresh {
			if lim.MaxUploadBytes > 0 && uploadBytes+im.Size > lim.MaxUploadBytes {
				rejected = append(rejected, media.Rejection{Name: media.ShortName(im.Name), Reason: fmt.Sprintf(
					"the upload would store more than %s of images (the limit of one upload): not added, upload it again on its own", media.HumanBytes(lim.MaxUploadBytes))})
				continue
			}
			if lim.MaxStudyBytes > 0 && studyBytes+uploadBytes+im.Size > lim.MaxStudyBytes {
				rejected = append(rejected, media.Rejection{Name: media.ShortName(im.Name), Reason: fmt.Sprintf(
					"the study's images would take more than %s (the limit of a study; it holds %s): not added", media.HumanBytes(lim.MaxStudyBytes), media.HumanBytes(studyBytes+uploadBytes))})
				continue
			}
			uploadBytes += im.Size
			it := study.Item{StudyID: studyID, Index: next, Kind: itemKind(im), Label: im.Label, FileName: im.Name,
				ContentType: im.ContentType, SHA256: im.SHA256, Width: im.Width, Height: im.Height}
			// One image's bytes in memory at a time (an upload's images
			// wait in its spool file).
			data, err := im.Bytes()
			if err != nil {
				return err
			}
			if im.Video {
				// As a sound's: the probe again, on the bytes kept.
				info, err := avfile.ProbeVideo(bytes.NewReader(data), int64(len(data)), avfile.DefaultVideo())
				if err != nil || info.MIME != im.ContentType || it.Width != info.Width || it.Height != info.Height {
					return fmt.Errorf("%s: not a video probed by avfile.ProbeVideo (%v)", im.Name, err)
				}
			} else if im.Sound {
				// The probe that found its type, again on the bytes kept:
				// a caller's Image is not taken at its word. Its duration
				// was checked against the study's limit by the caller; here
				// only against the longest any study allows.
				lim := avfile.DefaultAudio()
				lim.MaxDuration = study.MaxSoundMaxSeconds * time.Second
				info, err := avfile.ProbeAudio(bytes.NewReader(data), int64(len(data)), lim)
				if err != nil || info.MIME != im.ContentType || it.Width != 0 || it.Height != 0 {
					return fmt.Errorf("%s: not a sound probed by avfile.ProbeAudio (%v)", im.Name, err)
				}
			} else if ct, _, ok := media.Sniff(data); !im.Checked() || !ok || ct != im.ContentType {
				return fmt.Errorf("%s: not an image checked by media.Check", im.Name)
			}
			err = tx.QueryRow(ctx, `
				INSERT INTO items (study_id, idx, kind, label, file_name, content_type, sha256, width, height, data)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
				studyID, it.Index+1_000_000_000, string(it.Kind), it.Label, it.FileName, it.ContentType, it.SHA256, it.Width, it.Height, data).Scan(&it.ID)
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
		return nil, nil, err
	}
	slices.SortFunc(added, func(a, b study.Item) int { return a.Index - b.Index })
	return added, rejected, nil
}

// itemKindsSQL counts the kinds of a study's items.
const itemKindsSQL = `SELECT count(DISTINCT kind) FROM items WHERE study_id = $1`

// otherKindSQL finds the kind of an item of study $1 that is not of kind
// $2, and whether the study allows mixed kinds.
const otherKindSQL = `
	SELECT s.mixed_kinds, (SELECT kind FROM items WHERE study_id = s.id AND kind <> $2 LIMIT 1)
	FROM studies s WHERE s.id = $1`

// checkKindAllowed refuses items of kind into a study (locked by the
// caller) that holds items of another kind, unless it allows mixed kinds
// (studies.mixed_kinds; issue 29): by default a study is all images or
// all texts.
func checkKindAllowed(ctx context.Context, tx pgx.Tx, studyID int64, kind study.ItemKind) error {
	var mixed bool
	var other *string
	if err := tx.QueryRow(ctx, otherKindSQL, studyID, string(kind)).Scan(&mixed, &other); err != nil {
		return err
	}
	if other != nil && !mixed {
		return study.Errorf(study.KindConflict, "this study's items are %s items and these are %s items: a study has items of one kind unless its settings allow mixed kinds (Edit → Items and questions); nothing was added",
			*other, kind)
	}
	return nil
}

// itemKind is the kind of item an uploaded file makes.
func itemKind(im media.Image) study.ItemKind {
	if im.Video {
		return study.ItemVideo
	}
	if im.Sound {
		return study.ItemAudio
	}
	return study.ItemImage
}

// checkUploadKinds refuses an upload's files into a study (locked by the
// caller) unless the study allows mixed kinds or they are all of one kind,
// the kind of the items it holds already.
func checkUploadKinds(ctx context.Context, tx pgx.Tx, studyID int64, imgs []media.Image) error {
	kinds := map[study.ItemKind]int{}
	for _, im := range imgs {
		kinds[itemKind(im)]++
	}
	if len(kinds) > 1 {
		var mixed bool
		if err := tx.QueryRow(ctx, `SELECT mixed_kinds FROM studies WHERE id = $1`, studyID).Scan(&mixed); err != nil {
			return err
		}
		if !mixed {
			return study.Errorf(study.KindConflict, "the upload holds %d images, %d sounds and %d videos: a study has items of one kind unless its settings allow mixed kinds (Edit → Items and questions); nothing was added",
				kinds[study.ItemImage], kinds[study.ItemAudio], kinds[study.ItemVideo])
		}
		return nil
	}
	for k := range kinds {
		return checkKindAllowed(ctx, tx, studyID, k)
	}
	return nil
}

// checkKinds refuses a study (an import's, in its transaction) whose
// items are of more than one kind while it does not allow mixed kinds.
func checkKinds(ctx context.Context, tx pgx.Tx, studyID int64) error {
	var mixed bool
	var kinds int
	if err := tx.QueryRow(ctx, `SELECT s.mixed_kinds, (`+itemKindsSQL+`) FROM studies s WHERE s.id = $1`, studyID).Scan(&mixed, &kinds); err != nil {
		return err
	}
	if kinds > 1 && !mixed {
		return study.Errorf(study.KindInvalid, "the items are of %d kinds and the study does not allow mixed kinds", kinds)
	}
	return nil
}

// insertTextItemsSQL stores text items at indices $2, $2+1, ... in the
// order of its arrays, returning each one's id and index.
const insertTextItemsSQL = `
	INSERT INTO items (study_id, idx, kind, label, file_name, content_type, sha256, width, height, text)
	SELECT $1, $2 + u.ord::int - 1, 'text', u.label, u.file_name, '` + media.TextContentType + `', u.sha256, 0, 0, u.body
	FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS u(label, file_name, sha256, body, ord)
	RETURNING id, idx`

// AddTextItems stores text items (issue 29; media.ReadTextLines or
// ReadTextCSV read them, and each is checked again here with
// media.CheckText) at the end of the study's items, in their order, all
// or none: a text that is already an item of the study (by its sha256),
// a study that holds items of another kind without allowing mixed kinds,
// or more items than maxItems in the study (0: no bound) refuse the
// whole upload with the reason. source names where they came from
// ("typed" or a file name): an item's file name is source:line.
func (s *Store) AddTextItems(ctx context.Context, studyID int64, texts []media.TextItem, source string, maxItems int) (_ []study.Item, err error) {
	defer wrap(&err, "store.AddTextItems(%d, %d texts from %q)", studyID, len(texts), source)
	if len(texts) == 0 {
		return nil, study.Errorf(study.KindInvalid, "no items to add")
	}
	seen := map[string]int{}
	for _, t := range texts {
		if err := media.CheckText(t.Text); err != nil {
			return nil, study.Errorf(study.KindInvalid, "line %d: %v", t.Line, err)
		}
		if err := media.CheckLabel(t.Label); err != nil {
			return nil, study.Errorf(study.KindInvalid, "line %d: label: %v", t.Line, err)
		}
		if prev, dup := seen[t.Text]; dup {
			return nil, study.Errorf(study.KindInvalid, "line %d: the same text as line %d", t.Line, prev)
		}
		seen[t.Text] = t.Line
	}
	source = media.ShortName(source)
	var added []study.Item
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		added = nil
		var asked bool
		err := tx.QueryRow(ctx, lockStudyForItemsSQL, studyID).Scan(&asked)
		if errors.Is(err, pgx.ErrNoRows) {
			return study.NotFound("study")
		}
		if err != nil {
			return err
		}
		if err := checkKindAllowed(ctx, tx, studyID, study.ItemText); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM items WHERE study_id = $1`, studyID).Scan(&n); err != nil {
			return err
		}
		if maxItems > 0 && n+len(texts) > maxItems {
			return study.Errorf(study.KindInvalid, "the study would hold %d items, the limit is %d; nothing was added", n+len(texts), maxItems)
		}
		sums := make([]string, len(texts))
		for i, t := range texts {
			sums[i] = t.SHA256()
		}
		var dup *int32
		if err := tx.QueryRow(ctx, `SELECT min(u.ord)::int FROM unnest($2::text[]) WITH ORDINALITY AS u(sha256, ord)
			JOIN items i ON i.study_id = $1 AND i.sha256 = u.sha256`, studyID, sums).Scan(&dup); err != nil {
			return err
		}
		if dup != nil {
			t := texts[*dup-1]
			return study.Errorf(study.KindConflict, "line %d: %q is already an item of this study; nothing was added", t.Line, media.ShortName(t.Text))
		}
		// Texts keep the order they were given: appended, never
		// renumbered (their file names are no order). One statement for
		// the lot.
		labels, names, bodies := make([]string, len(texts)), make([]string, len(texts)), make([]string, len(texts))
		for i, t := range texts {
			it := study.Item{StudyID: studyID, Index: n + i, Kind: study.ItemText, Label: t.Label,
				FileName: fmt.Sprintf("%s:%d", source, t.Line), ContentType: media.TextContentType, SHA256: sums[i], Text: t.Text}
			labels[i], names[i], bodies[i] = it.Label, it.FileName, it.Text
			added = append(added, it)
		}
		rows, err := tx.Query(ctx, insertTextItemsSQL, studyID, n, labels, names, sums, bodies)
		if err != nil {
			return err
		}
		stored := 0
		var id int64
		var idx int
		_, err = pgx.ForEachRow(rows, []any{&id, &idx}, func() error {
			if idx < n || idx >= n+len(added) {
				return fmt.Errorf("text item stored at index %d, outside %d..%d", idx, n, n+len(added)-1)
			}
			added[idx-n].ID = id
			stored++
			return nil
		})
		if err != nil {
			return err
		}
		if stored != len(added) {
			return fmt.Errorf("%d text items stored of %d", stored, len(added))
		}
		// Servers keep a study's items in memory by version (items_cache.go).
		_, err = tx.Exec(ctx, `UPDATE studies SET version = version + 1 WHERE id = $1`, studyID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return added, nil
}

// ListItems returns a study's items in index order (without their bytes).
func (s *Store) ListItems(ctx context.Context, studyID int64) (_ []study.Item, err error) {
	defer wrap(&err, "store.ListItems(%d)", studyID)
	rows, err := s.pool.Query(ctx, `
		SELECT id, study_id, idx, kind, label, file_name, content_type, sha256, width, height, coalesce(text, '')
		FROM items WHERE study_id = $1 ORDER BY idx`, studyID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanItem)
}

// scanItem reads an item row of ListItems and ExampleItems.
func scanItem(r pgx.CollectableRow) (study.Item, error) {
	var it study.Item
	err := r.Scan(&it.ID, &it.StudyID, &it.Index, &it.Kind, &it.Label, &it.FileName, &it.ContentType, &it.SHA256, &it.Width, &it.Height, &it.Text)
	return it, err
}

// ExampleItems returns a study's first n items in index order (without
// their bytes): an example question shown before anyone takes part.
func (s *Store) ExampleItems(ctx context.Context, studyID int64, n int) (_ []study.Item, err error) {
	defer wrap(&err, "store.ExampleItems(%d, %d)", studyID, n)
	rows, err := s.pool.Query(ctx, `
		SELECT id, study_id, idx, kind, label, file_name, content_type, sha256, width, height, coalesce(text, '')
		FROM items WHERE study_id = $1 ORDER BY idx LIMIT $2`, studyID, n)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanItem)
}

// itemImageSQL reads an image by its sha256 (by name so that
// TestHotQueryPlans explains this very string on a large study).
const itemImageSQL = `SELECT content_type, data FROM items WHERE sha256 = $1 AND data IS NOT NULL LIMIT 1`

// ItemImage returns the bytes and content type of an image by its sha256
// (images are content-addressed: equal hashes are equal bytes).
func (s *Store) ItemImage(ctx context.Context, sum string) (contentType string, data []byte, err error) {
	defer wrap(&err, "store.ItemImage(%q)", sum)
	err = s.pool.QueryRow(ctx, itemImageSQL, sum).Scan(&contentType, &data)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil, study.NotFound("image")
	}
	if err != nil {
		return "", nil, err
	}
	return contentType, data, nil
}

// itemImageSizeSQL and itemImageChunkSQL read an image in pieces: its size
// first, then a range of its bytes (bytea positions count from 1).
// PostgreSQL fetches only the TOAST chunks a range covers from an image
// stored uncompressed, which images are (they do not compress).
const (
	itemImageSizeSQL  = `SELECT octet_length(data), content_type, kind FROM items WHERE sha256 = $1 AND data IS NOT NULL LIMIT 1`
	itemImageChunkSQL = `SELECT substring(data FROM $2 FOR $3) FROM items WHERE sha256 = $1 AND data IS NOT NULL LIMIT 1`
)

// ImageChunkBytes is the most an ImageReader asks PostgreSQL for at once:
// 1 KiB under 256 KiB, so that the message carrying a chunk fits the
// 256 KiB class of pgx's buffer pool (a full 256 KiB would take a 512 KiB
// buffer).
const ImageChunkBytes = 256<<10 - 1<<10

// ImageReader reads one stored image by its sha256 in chunks of at most
// ImageChunkBytes, one query each, into the caller's buffer: what it holds
// in memory does not grow with the image. The bytes are as stored; the
// caller verifies them against the hash.
type ImageReader struct {
	s    *Store
	ctx  context.Context
	sum  string
	size int64
	off  int64
	// ContentType and Kind are the stored row's: a sound's or a video's
	// type is its probe's, found before the row was stored (AddItemsWithin,
	// the bundle import), so a reader need not probe it again.
	ContentType string
	Kind        study.ItemKind
}

// OpenItemImage finds the image with sha256 sum (KindNotFound if no item
// has it) and returns a reader of its bytes.
func (s *Store) OpenItemImage(ctx context.Context, sum string) (_ *ImageReader, err error) {
	defer wrap(&err, "store.OpenItemImage(%q)", sum)
	var size *int64
	var contentType, kind string
	err = s.pool.QueryRow(ctx, itemImageSizeSQL, sum).Scan(&size, &contentType, &kind)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && size == nil {
		return nil, study.NotFound("image")
	}
	if err != nil {
		return nil, err
	}
	return &ImageReader{s: s, ctx: ctx, sum: sum, size: *size, ContentType: contentType, Kind: study.ItemKind(kind)}, nil
}

// Size is the image's size in bytes.
func (r *ImageReader) Size() int64 { return r.size }

// Read reads the next min(len(p), ImageChunkBytes) bytes (or what is left)
// with one query. A row gone or shorter than its size is an error; the end
// is io.EOF itself, not wrapped (io.Reader's contract).
func (r *ImageReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), ImageChunkBytes, r.size-r.off))
	if n == 0 {
		return 0, nil
	}
	dst := intoBuf{p: p[:n]}
	err := r.s.pool.QueryRow(r.ctx, itemImageChunkSQL, r.sum, r.off+1, n).Scan(&dst)
	if errors.Is(err, pgx.ErrNoRows) {
		err = errors.New("the image is gone")
	}
	if err == nil && dst.n != n {
		err = fmt.Errorf("%d bytes where %d were expected", dst.n, n)
	}
	if err != nil {
		wrap(&err, "store.ImageReader.Read(%d bytes of %s at %d)", n, r.sum, r.off)
		return 0, err
	}
	r.off += int64(n)
	return n, nil
}

// intoBuf receives a bytea into a buffer the caller owns, so that a chunk
// costs no allocation of its own (pgx hands ScanBytes its read buffer).
type intoBuf struct {
	p []byte
	n int
}

func (b *intoBuf) ScanBytes(v []byte) error {
	if len(v) > len(b.p) {
		return fmt.Errorf("%d bytes where at most %d were asked for", len(v), len(b.p))
	}
	b.n = copy(b.p, v)
	return nil
}
