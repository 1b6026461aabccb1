package avfile

import (
	"archive/zip"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/media"
)

// mp3Frames splits an MP3 file into its frames (its ID3 tag skipped).
func mp3Frames(t testing.TB, data []byte) [][]byte {
	if len(data) > 10 && string(data[:3]) == "ID3" {
		n := int(data[6])<<21 | int(data[7])<<14 | int(data[8])<<7 | int(data[9])
		data = data[10+n:]
	}
	var frames [][]byte
	for len(data) >= 4 {
		h, ok := parseMP3Header(data)
		if !ok || h.size() > len(data) {
			break
		}
		frames = append(frames, data[:h.size()])
		data = data[h.size():]
	}
	if len(frames) == 0 {
		t.Fatal("no frames in the fixture")
	}
	return frames
}

// writeMP3Zip writes a zip of files MP3s of secs seconds each to a file
// (the archive is not held in memory), compressed by method. Each frame
// is one of the fixture's headers with random bytes after it, so that,
// as with real sound, the zip finds little to compress.
func writeMP3Zip(b testing.TB, path string, files, secs int, method uint16) (rate int) {
	frames := mp3Frames(b, fixture(b, "cbr128.mp3"))
	h, _ := parseMP3Header(frames[0])
	n := secs * h.sampleRate / h.samples()
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	zw := zip.NewWriter(out)
	rng := rand.New(rand.NewPCG(1, 2))
	var buf []byte
	for i := range files {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("sounds/sound-%03d.mp3", i), Method: method})
		if err != nil {
			b.Fatal(err)
		}
		for j := range n {
			frame := append(buf[:0], frames[j%len(frames)]...)
			for k := 4; k < len(frame); k++ {
				frame[k] = byte(rng.Uint32())
			}
			buf = frame
			if _, err := w.Write(frame); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	return h.sampleRate
}

// BenchmarkProbe200MP3 is issue 29's upload target: 200 MP3s of 30 s each
// (about 100 MB) in a zip, each entry streamed from the archive through
// ProbeAudio, the zip stored (as tools that know MP3s do not compress)
// and deflated. It reports the seconds and the peak heap of one pass; run
// the test binary under /usr/bin/time -v for the process's peak RSS
// (docs/benchmarks.md). -short probes 10 files.
func BenchmarkProbe200MP3(b *testing.B) {
	files := 200
	if testing.Short() {
		files = 10
	}
	for _, m := range []struct {
		name   string
		method uint16
	}{{"stored", zip.Store}, {"deflated", zip.Deflate}} {
		b.Run(m.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "sounds.zip")
			writeMP3Zip(b, path, files, 30, m.method)
			benchmarkProbeZip(b, path, files)
		})
	}
}

func benchmarkProbeZip(b *testing.B, path string, files int) {
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	var (
		peak     uint64
		ms       runtime.MemStats
		expanded int64
	)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		zr, err := media.OpenZip(f, st.Size(), 0)
		if err != nil {
			b.Fatal(err)
		}
		expanded = 0
		for _, e := range zr.File {
			rc, err := e.Open()
			if err != nil {
				b.Fatal(err)
			}
			info, err := ProbeAudio(rc, int64(e.UncompressedSize64), DefaultAudio())
			_ = rc.Close()
			if err != nil {
				b.Fatalf("%s: %v", e.Name, err)
			}
			if !within(info.Duration, 30*time.Second, 0.01) {
				b.Fatalf("%s: %v, want 30 s", e.Name, info.Duration)
			}
			expanded += int64(e.UncompressedSize64)
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
		_ = f.Close()
	}
	b.StopTimer()
	b.ReportMetric(float64(st.Size())/1e6, "MB-zip")
	b.ReportMetric(float64(expanded)/1e6, "MB-sound")
	b.ReportMetric(float64(files), "files")
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
}
