package collect_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/media"
	"github.com/closer-lab/closer/internal/media/mediatest"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/store"
	"github.com/closer-lab/closer/internal/study"
)

// TestImageReaderReadsInChunks: an image read through OpenItemImage, in
// reads of any size, is its bytes; a read never returns more than
// ImageChunkBytes; an unknown hash is KindNotFound; an image deleted
// between two chunks is an error, not a short image.
func TestImageReaderReadsInChunks(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	s := collect.New(pool)
	ctx := context.Background()
	st, err := s.CreateStudy(ctx, study.StudyInput{Slug: "s1", Title: "S1", QuestionsPerParticipant: 3, Status: study.StatusDraft})
	if err != nil {
		t.Fatal(err)
	}
	data := mediatest.NoisePNG(400, 400, 7) // about 480 KiB: two chunks
	im, err := media.Check("n.png", data, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AddItems(ctx, st.ID, []media.Image{im}); err != nil {
		t.Fatal(err)
	}
	for _, bufSize := range []int{1000, store.ImageChunkBytes, 4 << 20} {
		rd, err := s.OpenItemImage(ctx, im.SHA256)
		if err != nil || rd.Size() != int64(len(data)) {
			t.Fatalf("open: %v, size %v", err, rd)
		}
		var got bytes.Buffer
		buf := make([]byte, bufSize)
		for {
			n, err := rd.Read(buf)
			if n > store.ImageChunkBytes {
				t.Fatalf("a read of %d bytes", n)
			}
			got.Write(buf[:n])
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got.Bytes(), data) {
			t.Fatalf("reads of %d: %d bytes, not the image", bufSize, got.Len())
		}
	}
	if _, err := s.OpenItemImage(ctx, strings.Repeat("0", 64)); collect.KindOf(err) != study.KindNotFound {
		t.Fatalf("unknown image: %v", err)
	}
	rd, err := s.OpenItemImage(ctx, im.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(rd, make([]byte, store.ImageChunkBytes)); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM items WHERE sha256 = $1`, im.SHA256); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(rd); err == nil || !strings.Contains(err.Error(), "the image is gone") {
		t.Fatalf("a deleted image read on: %v", err)
	}
}
