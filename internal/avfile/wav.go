package avfile

import (
	"encoding/binary"
	"time"

	"github.com/closer-lab/closer/internal/media"
)

// maxChunks bounds the chunks of a RIFF file read before its sound: real
// files have a handful (fmt, LIST, fact, data).
const maxChunks = 1000

// wav parses a RIFF/WAVE file: the "fmt " chunk says how the sound is
// coded, the "data" chunk's size how long it lasts.
func (s *stream) wav() (Info, error) {
	s.what = "WAV"
	if _, err := s.read(12); err != nil {
		return Info{}, s.truncated(err, "its RIFF header")
	}
	var (
		info     = Info{Kind: Audio, MIME: MIMEWAV, Ext: ".wav", Container: "WAV"}
		haveFmt  bool
		byteRate int64
	)
	for range maxChunks {
		h, err := s.read(8)
		if err != nil {
			if s.atEOF() {
				return Info{}, refuse(Malformed, "not a WAV file: it has no data chunk")
			}
			return Info{}, s.truncated(err, "a chunk header")
		}
		id, n := string(h[:4]), int64(binary.LittleEndian.Uint32(h[4:8]))
		switch id {
		case "fmt ":
			if haveFmt {
				return Info{}, refuse(Malformed, "not a WAV file: it has two fmt chunks")
			}
			if n < 16 || n > 1024 {
				return Info{}, refuse(Malformed, "not a WAV file: its fmt chunk is %d bytes, not 16 to 40", n)
			}
			f, err := s.read(int(n + n&1))
			if err != nil {
				return Info{}, s.truncated(err, "its fmt chunk")
			}
			tag := binary.LittleEndian.Uint16(f[0:2])
			info.Channels = int(binary.LittleEndian.Uint16(f[2:4]))
			info.SampleRate = int(binary.LittleEndian.Uint32(f[4:8]))
			byteRate = int64(binary.LittleEndian.Uint32(f[8:12]))
			blockAlign := int64(binary.LittleEndian.Uint16(f[12:14]))
			bits := int(binary.LittleEndian.Uint16(f[14:16]))
			if tag == 0xFFFE && n >= 40 {
				tag = binary.LittleEndian.Uint16(f[24:26]) // the extensible format's sub-format GUID starts with the tag
			}
			switch tag {
			case 1:
				info.Codec = "pcm"
			case 3:
				info.Codec = "pcm-float"
			default:
				return Info{}, refuse(Unsupported, "a WAV file whose sound is coded as format 0x%04X; closer accepts uncompressed (PCM or float) WAV files", tag)
			}
			if info.Channels < 1 || info.Channels > 8 || info.SampleRate < 1000 || info.SampleRate > 384000 || bits < 8 || bits > 64 {
				return Info{}, refuse(Malformed, "not a WAV file: its fmt chunk states %d channels of %d-bit samples at %d Hz", info.Channels, bits, info.SampleRate)
			}
			if blockAlign != int64(info.Channels*((bits+7)/8)) || byteRate != int64(info.SampleRate)*blockAlign {
				return Info{}, refuse(Malformed, "not a WAV file: its fmt chunk's byte rate (%d) and block size (%d) do not match %d channels of %d-bit samples at %d Hz", byteRate, blockAlign, info.Channels, bits, info.SampleRate)
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return Info{}, refuse(Malformed, "not a WAV file: its data chunk comes before its fmt chunk")
			}
			if s.size >= 0 && s.pos+n > s.size {
				return Info{}, refuse(Truncated, "the WAV file is cut short: its header declares %s of sound, the file has %s", media.HumanBytes(n), media.HumanBytes(max(s.size-s.pos, 0)))
			}
			if err := s.skip(n); err != nil {
				return Info{}, s.truncated(err, "its sound")
			}
			info.Duration = time.Duration(float64(n) / float64(byteRate) * float64(time.Second))
			// What follows the sound (LIST, id3 chunks) is not played:
			// the file is not read further.
			return info, nil
		default:
			if err := s.skip(n + n&1); err != nil {
				return Info{}, s.truncated(err, "its "+printable(id)+" chunk")
			}
		}
	}
	return Info{}, refuse(Malformed, "not a WAV file: more than %d chunks before its sound", maxChunks)
}

// printable quotes a four-character code for a message, hiding bytes that
// are not printable ASCII.
func printable(id string) string {
	b := []byte(id)
	for i, c := range b {
		if c < 0x20 || c > 0x7E {
			b[i] = '?'
		}
	}
	return `"` + string(b) + `"`
}
