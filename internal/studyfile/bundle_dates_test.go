package studyfile

import (
	"archive/zip"
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
)

// Every entry of an exported bundle, the CSVs and JSON files as well as the
// images, is dated the time of the export (issue 26: all but the images
// were dated 1980-00-00, an invalid date in the zip's DOS fields).
func TestBundleEntriesDatedAtExport(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	ctx := context.Background()
	data := validParts().zip(t)
	st, _, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), BundleNames{Slug: "dated"}, BundleLimits{})
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().Add(-2 * time.Second) // the DOS time counts in 2 s steps
	var out bytes.Buffer
	if err := ExportBundle(ctx, s, st.ID, &out); err != nil {
		t.Fatal(err)
	}
	after := time.Now().Add(2 * time.Second)
	zr, err := zip.NewReader(bytes.NewReader(out.Bytes()), int64(out.Len()))
	if err != nil {
		t.Fatal(err)
	}
	images := 0
	for _, f := range zr.File {
		if f.Method == zip.Store {
			images++
		}
		if f.ModifiedDate == 0 || f.Modified.Before(before) || f.Modified.After(after) {
			t.Errorf("%s dated %v (DOS date %#x), want the export's time, %v", f.Name, f.Modified, f.ModifiedDate, before)
		}
	}
	if len(zr.File) < 5 || images == 0 {
		t.Fatalf("%d entries, %d images: not a whole bundle", len(zr.File), images)
	}
}
