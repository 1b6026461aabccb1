package studyfile

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
)

// A bundle's CSV files are safe to open in a spreadsheet (formula-like
// labels and external ids carry csvsafe's quote), and importing the bundle
// gives the text back exactly. A version 1 bundle, written before the rule,
// keeps a leading quote as data.
func TestBundleNeutralisesFormulasAndRoundTrips(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	ctx := context.Background()

	p := validParts()
	p.manifest = strings.Replace(p.manifest, `"version": 1`, `"version": 2`, 1)
	p.items = strings.Replace(p.items, "0,a,a.png", "0,'=1+1,a.png", 1)
	p.participants = strings.Replace(p.participants, "p1,x-1,", "p1,\"'=HYPERLINK(\"\"http://evil.example\"\")\",", 1)
	data := p.zip(t)
	st, _, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), BundleNames{Slug: "formulas"}, BundleLimits{})
	if err != nil {
		t.Fatal(err)
	}
	items, err := s.ListItems(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if items[0].Label != "=1+1" {
		t.Fatalf("label read as %q, want =1+1", items[0].Label)
	}
	var ext string
	if err := pool.QueryRow(ctx, `SELECT external_id FROM participants WHERE study_id = $1 AND external_id LIKE '=%'`, st.ID).Scan(&ext); err != nil {
		t.Fatal(err)
	}
	if ext != `=HYPERLINK("http://evil.example")` {
		t.Fatalf("external id read as %q", ext)
	}

	// Exported again: no cell of any CSV would run, and the bundle imports
	// to the same text.
	var out bytes.Buffer
	if err := ExportBundle(ctx, s, st.ID, &out); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(out.Bytes()), int64(out.Len()))
	if err != nil {
		t.Fatal(err)
	}
	quoted := 0
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, ".csv") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(rc).ReadAll()
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			for _, c := range rec {
				if wouldRun(c) {
					t.Errorf("%s: cell %q would run as a formula", f.Name, c)
				}
				if strings.HasPrefix(c, "'=") {
					quoted++
				}
			}
		}
	}
	if quoted != 2 {
		t.Errorf("%d quoted cells in the export, want 2 (the label and the external id)", quoted)
	}
	again, _, err := ImportBundle(ctx, s, bytes.NewReader(out.Bytes()), int64(out.Len()), BundleNames{Slug: "formulas-again"}, BundleLimits{})
	if err != nil {
		t.Fatal(err)
	}
	items2, err := s.ListItems(ctx, again.ID)
	if err != nil {
		t.Fatal(err)
	}
	if items2[0].Label != "=1+1" {
		t.Fatalf("round trip: label %q, want =1+1", items2[0].Label)
	}

	// Version 1: the quote is part of the label.
	v1 := validParts()
	v1.items = strings.Replace(v1.items, "0,a,a.png", "0,'=1+1,a.png", 1)
	data = v1.zip(t)
	old, _, err := ImportBundle(ctx, s, bytes.NewReader(data), int64(len(data)), BundleNames{Slug: "version-one"}, BundleLimits{})
	if err != nil {
		t.Fatal(err)
	}
	items3, err := s.ListItems(ctx, old.ID)
	if err != nil {
		t.Fatal(err)
	}
	if items3[0].Label != "'=1+1" {
		t.Fatalf("version 1 label %q, want '=1+1 kept as it was", items3[0].Label)
	}
}

// wouldRun is how a spreadsheet reads a cell: a formula when its first
// character other than white space is a formula sign, unless it is a plain
// number (written apart from csvsafe, so the test does not trust it).
func wouldRun(c string) bool {
	t := strings.TrimLeft(c, " \t\r\n")
	if t == "" || strings.IndexFunc(t, func(r rune) bool { return !strings.ContainsRune("0123456789.eE+-", r) }) < 0 {
		return false
	}
	return strings.ContainsRune("=+-@＝＋－＠", []rune(t)[0]) || strings.ContainsAny(c[:len(c)-len(t)], "\t\r")
}
