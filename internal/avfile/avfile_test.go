package avfile

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/media"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wavBytes writes a RIFF/WAVE file of the given format holding samples
// frames of silence (tag 1: PCM, 3: float).
func wavBytes(tag uint16, rate, channels, bits, frames int) []byte {
	block := channels * bits / 8
	data := frames * block
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(4 + 8 + 16 + 8 + data))
	b.WriteString("WAVEfmt ")
	le(uint32(16))
	le(tag)
	le(uint16(channels))
	le(uint32(rate))
	le(uint32(rate * block))
	le(uint16(block))
	le(uint16(bits))
	b.WriteString("LIST")
	le(uint32(3))
	b.WriteString("abc\x00") // an odd-sized chunk and its pad byte
	b.WriteString("data")
	le(uint32(data))
	b.Write(make([]byte, data))
	return b.Bytes()
}

func within(got, want time.Duration, tol float64) bool {
	return math.Abs(got.Seconds()-want.Seconds()) <= tol*want.Seconds()
}

func TestProbeFixtures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file                string
		kind                Kind
		mime, cont, codec   string
		audioCodec          string
		dur                 time.Duration
		width, height, rate int
	}{
		{"tone.wav", Audio, MIMEWAV, "WAV", "pcm", "", 500 * time.Millisecond, 0, 0, 8000},
		{"tone.mp3", Audio, MIMEMP3, "MP3", "mp3", "mp3", 5 * time.Second, 0, 0, 8000},
		{"cbr128.mp3", Audio, MIMEMP3, "MP3", "mp3", "mp3", 548563 * time.Microsecond, 0, 0, 44100}, // no Xing tag, so the encoder's delay and padding count, as ffprobe says
		{"tone-opus.ogg", Audio, MIMEOgg, "Ogg", "opus", "opus", 5 * time.Second, 0, 0, 8000},
		{"tone-vorbis.ogg", Audio, MIMEOgg, "Ogg", "vorbis", "vorbis", 5 * time.Second, 0, 0, 8000},
		{"tone.flac", Audio, MIMEFLAC, "FLAC", "flac", "flac", 5 * time.Second, 0, 0, 8000},
		{"tone.m4a", Audio, MIMEM4A, "M4A", "aac", "aac", 5 * time.Second, 0, 0, 8000},
		{"clip.mp4", Video, MIMEMP4, "MP4", "h264", "aac", 5 * time.Second, 64, 48, 8000},
		{"clip.webm", Video, MIMEWebM, "WebM", "vp9", "opus", 5 * time.Second, 64, 48, 8000}, // the input's rate, which Opus resamples
		{"clip-stream.webm", Video, MIMEWebM, "WebM", "vp8", "", 5 * time.Second, 64, 48, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			data := fixture(t, tc.file)
			for _, size := range []int64{int64(len(data)), -1} {
				info, err := Probe(bytes.NewReader(data), size, Limits{})
				if err != nil {
					t.Fatalf("size %d: %v", size, err)
				}
				if ext, ok := ExtOf(info.MIME); !ok || ext != info.Ext {
					t.Errorf("size %d: ExtOf(%s) = %q, %v; the probe's extension is %q", size, info.MIME, ext, ok, info.Ext)
				}
				if info.Kind != tc.kind || info.MIME != tc.mime || info.Container != tc.cont || info.Codec != tc.codec || info.AudioCodec != tc.audioCodec {
					t.Errorf("size %d: got %v %s %s %s/%s, want %v %s %s %s/%s", size, info.Kind, info.MIME, info.Container, info.Codec, info.AudioCodec, tc.kind, tc.mime, tc.cont, tc.codec, tc.audioCodec)
				}
				if !within(info.Duration, tc.dur, 0.01) {
					t.Errorf("size %d: duration %v, want %v within 1%%", size, info.Duration, tc.dur)
				}
				if info.Width != tc.width || info.Height != tc.height || info.SampleRate != tc.rate {
					t.Errorf("size %d: %d×%d at %d Hz, want %d×%d at %d Hz", size, info.Width, info.Height, info.SampleRate, tc.width, tc.height, tc.rate)
				}
			}
			probeKind := ProbeAudio
			if tc.kind == Video {
				probeKind = ProbeVideo
			}
			if _, err := probeKind(bytes.NewReader(data), int64(len(data)), Limits{}); err != nil {
				t.Errorf("as a %v: %v", tc.kind, err)
			}
		})
	}
}

func TestProbeWAVDurations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tag                        uint16
		rate, channels, bits, secs int
	}{
		{1, 8000, 1, 8, 1}, {1, 44100, 2, 16, 3}, {1, 48000, 1, 24, 2}, {3, 22050, 2, 32, 4},
	} {
		data := wavBytes(tc.tag, tc.rate, tc.channels, tc.bits, tc.rate*tc.secs)
		info, err := ProbeAudio(bytes.NewReader(data), int64(len(data)), Limits{})
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		if !within(info.Duration, time.Duration(tc.secs)*time.Second, 1e-9) || info.Channels != tc.channels || info.SampleRate != tc.rate {
			t.Errorf("%+v: got %v, %d channels at %d Hz", tc, info.Duration, info.Channels, info.SampleRate)
		}
	}
}

// cut returns the first frac of data.
func cut(data []byte, frac float64) []byte { return data[:int(float64(len(data))*frac)] }

// patch returns data with b written at off.
func patch(data []byte, off int, b string) []byte {
	c := bytes.Clone(data)
	copy(c[off:], b)
	return c
}

func pngBytes(t *testing.T) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestProbeRefusals(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	wav4GB := wavBytes(1, 8000, 1, 8, 8000)
	binary.LittleEndian.PutUint32(wav4GB[len(wav4GB)-8000-4:], 0xFFFFFFFF)
	mp3Junk := append([]byte{0xFF, 0xFB, 0x90, 0x64}, random(100_000)...)
	id3Junk := append([]byte("ID3\x04\x00\x00\x00\x00\x00\x0a0123456789"), random(50_000)...)
	mulaw := wavBytes(1, 8000, 1, 8, 8000)
	binary.LittleEndian.PutUint16(mulaw[20:], 7)
	m4a := fixture(t, "tone.m4a")
	badBlock := wavBytes(1, 8000, 1, 8, 8000)
	binary.LittleEndian.PutUint16(badBlock[32:], 2) // block size 2 for one 8-bit channel
	// tone-opus.ogg without its fourth page.
	opus := fixture(t, "tone-opus.ogg")
	var pages []int
	for i := 0; i+4 <= len(opus); i++ {
		if string(opus[i:i+4]) == "OggS" {
			pages = append(pages, i)
		}
	}
	if len(pages) < 5 {
		t.Fatalf("tone-opus.ogg has %d pages", len(pages))
	}
	pageMissing := append(bytes.Clone(opus[:pages[3]]), opus[pages[4]:]...)
	// clip.webm declared as Matroska: the DocType "webm" becomes
	// "matroska" and the EBML header grows by 4 bytes.
	webm := fixture(t, "clip.webm")
	dt := bytes.Index(webm[:64], []byte("\x42\x82\x84webm"))
	if dt < 0 || webm[4]&0x80 == 0 {
		t.Fatal("clip.webm's EBML header is not as expected")
	}
	mkv := append(bytes.Clone(webm[:dt]), []byte("\x42\x82\x88matroska")...)
	mkv = append(mkv, webm[dt+7:]...)
	mkv[4] += 4
	type probeFunc func(io.Reader, int64, Limits) (Info, error)
	cases := []struct {
		name  string
		data  []byte
		probe probeFunc
		lim   Limits
		want  Reason
		text  string
	}{
		{"empty", nil, Probe, Limits{}, Unrecognised, "empty"},
		{"random bytes", random(10_000), ProbeAudio, Limits{}, Unrecognised, "not a sound file closer accepts"},
		{"a PNG image", pngBytes(t), ProbeAudio, Limits{}, Unrecognised, "image/png"},
		{"a zip", []byte("PK\x03\x04rest of a zip"), ProbeVideo, Limits{}, Unrecognised, "MP4 or WebM"},
		{"an MP3 header then random bytes", mp3Junk, ProbeAudio, Limits{}, Malformed, "not an MP3 file"},
		{"an ID3 tag then random bytes", id3Junk, ProbeAudio, Limits{}, Malformed, "not an MP3 file"},
		{"WAV lasting 45 s", wavBytes(1, 8000, 1, 8, 45*8000), ProbeAudio, Limits{}, TooLong, "lasts 45 s, the study's limit is 30 s"},
		{"WAV whose header claims 4 GB", wav4GB, ProbeAudio, Limits{}, Truncated, "its header declares 4"},
		{"WAV in mu-law", mulaw, ProbeAudio, Limits{}, Unsupported, "format 0x0007"},
		{"a QuickTime movie", patch(m4a, 8, "qt  "), Probe, Limits{}, Unsupported, "QuickTime"},
		{"WAV whose block size does not match", badBlock, ProbeAudio, Limits{}, Malformed, "block size (2)"},
		{"Ogg with a page missing", pageMissing, ProbeAudio, Limits{}, Truncated, "1 of its pages are missing"},
		{"a Matroska file", mkv, ProbeVideo, Limits{}, Unsupported, "Matroska"},
		{"an MP4 of HEVC", bytes.ReplaceAll(fixture(t, "clip.mp4"), []byte("avc1"), []byte("hvc1")), ProbeVideo, Limits{}, Unsupported, `coded as "hvc1"`},
		{"MP4 boxes nested 100,000 deep", nestedMP4(100_000), Probe, Limits{}, Malformed, "nest more than 8 deep"},
		{"an MP3 mostly junk", append(fixture(t, "tone.mp3"), make([]byte, 20_000)...), ProbeAudio, Limits{}, Malformed, "are not MP3 frames"},
		{"an M4A as a video", m4a, ProbeVideo, Limits{}, WrongKind, "not a video"},
		{"an MP3 as a video", fixture(t, "tone.mp3"), ProbeVideo, Limits{}, WrongKind, "not a video"},
		{"an MP4 video as a sound", fixture(t, "clip.mp4"), ProbeAudio, Limits{}, WrongKind, "a video (MP4"},
		{"a WebM video as a sound", fixture(t, "clip.webm"), ProbeAudio, Limits{}, WrongKind, "a video (WebM"},
		{"an MP4 too wide", fixture(t, "clip.mp4"), ProbeVideo, Limits{MaxWidth: 32}, TooManyPixels, "64×48 pixels, the study's limit is 32×1920"},
		{"a WebM too tall", fixture(t, "clip.webm"), ProbeVideo, Limits{MaxHeight: 40}, TooManyPixels, "64×48 pixels"},
		{"a FLAC over the size limit", fixture(t, "tone.flac"), ProbeAudio, Limits{MaxBytes: 1000}, TooLarge, "the limit is 1,000 bytes"},
	}
	for _, f := range []string{"tone.wav", "tone.mp3", "tone-opus.ogg", "tone-vorbis.ogg", "tone.flac", "tone.m4a", "clip.mp4", "clip.webm", "clip-stream.webm"} {
		cases = append(cases, struct {
			name  string
			data  []byte
			probe probeFunc
			lim   Limits
			want  Reason
			text  string
		}{f + " cut short", cut(fixture(t, f), 0.6), Probe, Limits{}, Truncated, "cut short"})
		if f != "tone.wav" {
			cases = append(cases, struct {
				name  string
				data  []byte
				probe probeFunc
				lim   Limits
				want  Reason
				text  string
			}{f + " too long", fixture(t, f), Probe, Limits{MaxDuration: 2 * time.Second}, TooLong, "the study's limit is 2 s"})
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Known size (an upload, a zip entry) and unknown (a stream).
			for _, size := range []int64{int64(len(tc.data)), -1} {
				info, err := tc.probe(bytes.NewReader(tc.data), size, tc.lim)
				want, text := tc.want, tc.text
				if size < 0 && tc.name == "WAV whose header claims 4 GB" {
					// Unknown to be short, the file is refused for the
					// size its header claims.
					want, text = TooLarge, "too large (4"
				}
				if err == nil {
					t.Fatalf("size %d: accepted as %+v", size, info)
				}
				if ReasonOf(err) != want || !strings.Contains(err.Error(), text) {
					t.Errorf("size %d: got %v (reason %d), want reason %d with %q", size, err, ReasonOf(err), want, text)
				}
			}
		})
	}
}

// TestSniffedByContent: a file's name says nothing; each zip entry, named
// as another format, is probed as what it holds.
func TestSniffedByContent(t *testing.T) {
	t.Parallel()
	entries := []struct{ name, file, mime string }{
		{"birdsong.mp3", "tone.flac", MIMEFLAC},
		{"speech.wav", "tone.mp3", MIMEMP3},
		{"clip.webm", "clip.mp4", MIMEMP4},
		{"clip.mp4", "clip.webm", MIMEWebM},
		{"voice.m4a", "tone-opus.ogg", MIMEOgg},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.Create(e.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(fixture(t, e.file)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	zr, err := media.OpenZip(bytes.NewReader(buf.Bytes()), int64(buf.Len()), 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		info, err := Probe(rc, int64(f.UncompressedSize64), Limits{})
		_ = rc.Close()
		if err != nil || info.MIME != entries[i].mime {
			t.Errorf("%s (%s): got %q, %v; want %s", f.Name, entries[i].file, info.MIME, err, entries[i].mime)
		}
	}
}

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func heapAllocated() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// TestMemoryDoesNotGrowWithFile probes a 256 MB WAV stream of unknown
// length: the probe allocates its look-ahead buffer and little else.
func TestMemoryDoesNotGrowWithFile(t *testing.T) { //nolint:paralleltest // it measures the process's allocations, which parallel tests would add to
	const n = 256 << 20
	head := wavBytes(1, 8000, 1, 8, 0)
	binary.LittleEndian.PutUint32(head[len(head)-4:], n)
	r := io.MultiReader(bytes.NewReader(head), io.LimitReader(zeros{}, n))
	before := heapAllocated()
	info, err := ProbeAudio(r, -1, Limits{MaxBytes: 1 << 30, MaxDuration: 24 * time.Hour})
	allocated := heapAllocated() - before
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Duration(float64(n) / 8000 * float64(time.Second)); !within(info.Duration, want, 1e-9) {
		t.Errorf("duration %v, want %v", info.Duration, want)
	}
	if allocated > 1<<20 {
		t.Errorf("probing a %d MB stream allocated %d KB", n>>20, allocated>>10)
	}
	// The same stream over the size limit is refused once the limit is read.
	r = io.MultiReader(bytes.NewReader(head), io.LimitReader(zeros{}, n))
	if _, err := ProbeAudio(r, -1, Limits{}); ReasonOf(err) != TooLarge {
		t.Errorf("over the limit: %v", err)
	}
}

func TestReasonOf(t *testing.T) {
	t.Parallel()
	if ReasonOf(errors.New("x")) != 0 || ReasonOf(refuse(TooLong, "x")) != TooLong {
		t.Error("ReasonOf does not read the reason")
	}
	if got := Seconds(45 * time.Second); got != "45 s" {
		t.Errorf("Seconds(45 s) = %q", got)
	}
	if got := Seconds(2500 * time.Millisecond); got != "2.5 s" {
		t.Errorf("Seconds(2.5 s) = %q", got)
	}
}

// nestedMP4 is an ftyp box and a moov box holding a trak holding mdia
// boxes nested depth deep.
func nestedMP4(depth int) []byte {
	box := func(typ string, n int) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(n+8))
		return append(b, typ...)
	}
	out := append(box("ftyp", 8), "isom\x00\x00\x02\x00"...)
	out = append(out, box("moov", depth*8)...)
	out = append(out, box("trak", (depth-1)*8)...)
	for i := range depth - 1 {
		out = append(out, box("mdia", (depth-2-i)*8)...)
	}
	return out
}
