package mediatest

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"io"
	"testing"
)

// The shortcuts that make the bombs cheap must still make valid streams.
func TestZeroZlibAndPaddedZipAreValid(t *testing.T) {
	t.Parallel()
	for _, n := range []int64{1, 1000, 16 << 20, 16<<20 + 1, 40<<20 + 7} {
		zr, err := zlib.NewReader(bytes.NewReader(ZeroZlib(n)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.Copy(io.Discard, zr)
		if err != nil || got != n {
			t.Fatalf("%d zeros: read %d, %v", n, got, err)
		}
	}
	z := PaddedZip(3, 1<<20)
	zr, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
	if err != nil || len(zr.File) != 3 {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, err := io.ReadAll(rc)
		if err != nil || !bytes.Equal(b, PaddedPNG(1<<20)) {
			t.Fatalf("%s: %v", f.Name, err)
		}
	}
}
