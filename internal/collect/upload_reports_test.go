package collect_test

import (
	"context"
	"testing"

	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/study"
)

// An upload's report keeps what it is given, but PostgreSQL stores neither
// NUL nor invalid UTF-8, which a file name in a zip or a quoted multipart
// header may hold: those become U+FFFD instead of failing the upload's
// redirect with a server error.
func TestUploadReportKeepsAnyText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, st := newStudy(t, 3, 2)
	rep := study.UploadReport{
		Rejected: []media.Rejection{{Name: "a\x00b.png", Reason: "not an image: \xff"}},
		Refused:  "bad header \"\x00\xfe\"",
	}
	id, err := s.SaveUploadReport(ctx, st.ID, rep)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.UploadReportByID(ctx, st.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rejected) != 1 || got.Rejected[0].Name != "a\uFFFDb.png" || got.Rejected[0].Reason != "not an image: \uFFFD" ||
		got.Refused != "bad header \"\uFFFD\uFFFD\"" {
		t.Errorf("read back %+v", got)
	}
}
