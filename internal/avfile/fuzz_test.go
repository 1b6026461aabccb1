package avfile

import (
	"bytes"
	"testing"
	"time"
)

// fuzzProbe checks what any input must give: no panic (check runs without
// probe's recovery), and either a refusal with a reason or an Info within
// the limits.
func fuzzProbe(f *testing.F, seeds ...string) {
	for _, s := range seeds {
		data := fixture(f, s)
		f.Add(data)
		f.Add(cut(data, 0.5))
		f.Add(data[:min(len(data), 200)])
	}
	lim := Limits{MaxDuration: 10 * time.Second, MaxBytes: 1 << 20, MaxWidth: 1000, MaxHeight: 1000}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, size := range []int64{int64(len(data)), -1} {
			info, err := check(bytes.NewReader(data), size, lim, 0)
			if err != nil {
				if ReasonOf(err) == 0 || err.Error() == "" {
					t.Fatalf("size %d: an error that is not a refusal: %v", size, err)
				}
				continue
			}
			if info.MIME == "" || info.Ext == "" || info.Duration <= 0 || info.Duration > lim.MaxDuration {
				t.Fatalf("size %d: accepted %+v", size, info)
			}
			if info.Kind == Video && (info.Width <= 0 || info.Height <= 0 || info.Width > lim.MaxWidth || info.Height > lim.MaxHeight) {
				t.Fatalf("size %d: accepted a video of %d×%d", size, info.Width, info.Height)
			}
		}
	})
}

func FuzzProbeWAV(f *testing.F) {
	f.Add(wavBytes(1, 8000, 1, 8, 100))
	f.Add(wavBytes(3, 8000, 2, 32, 10))
	fuzzProbe(f, "tone.wav")
}

func FuzzProbeMP3(f *testing.F) { fuzzProbe(f, "tone.mp3", "cbr128.mp3") }

func FuzzProbeOgg(f *testing.F) { fuzzProbe(f, "tone-opus.ogg", "tone-vorbis.ogg") }

func FuzzProbeFLAC(f *testing.F) { fuzzProbe(f, "tone.flac") }

func FuzzProbeMP4(f *testing.F) { fuzzProbe(f, "tone.m4a", "clip.mp4") }

func FuzzProbeWebM(f *testing.F) { fuzzProbe(f, "clip.webm", "clip-stream.webm") }
