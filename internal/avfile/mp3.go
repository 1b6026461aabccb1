package avfile

import (
	"bytes"
	"encoding/binary"
	"time"
)

// mp3Header is one MPEG audio frame header (ISO 11172-3, 13818-3 and the
// unofficial MPEG 2.5 extension), Layer III only: browsers play MP3, and
// Layer I and II files are rare enough to refuse.
type mp3Header struct {
	version    int // 1, 2, or 25 (MPEG 2.5)
	sampleRate int
	bitrate    int // bits per second
	padding    int
	mono       bool
	crc        bool
}

// parseMP3Header decodes four bytes; ok is false unless they are a valid
// Layer III header with a stated bitrate (free format is refused).
func parseMP3Header(b []byte) (h mp3Header, ok bool) {
	bitratesV1 := [16]int{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0}
	bitratesV2 := [16]int{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0}
	rates := [3]int{44100, 48000, 32000}
	if len(b) < 4 || b[0] != 0xFF || b[1]&0xE0 != 0xE0 {
		return h, false
	}
	switch (b[1] >> 3) & 3 {
	case 0:
		h.version = 25
	case 2:
		h.version = 2
	case 3:
		h.version = 1
	default:
		return h, false
	}
	if (b[1]>>1)&3 != 1 { // Layer III
		return h, false
	}
	h.crc = b[1]&1 == 0
	bi, si := b[2]>>4, (b[2]>>2)&3
	if bi == 0 || bi == 15 || si == 3 || b[3]&3 == 2 {
		return h, false
	}
	if h.version == 1 {
		h.bitrate = bitratesV1[bi] * 1000
	} else {
		h.bitrate = bitratesV2[bi] * 1000
	}
	h.sampleRate = rates[si]
	switch h.version {
	case 2:
		h.sampleRate /= 2
	case 25:
		h.sampleRate /= 4
	}
	h.padding = int(b[2]>>1) & 1
	h.mono = b[3]>>6 == 3
	return h, true
}

func (h mp3Header) samples() int {
	if h.version == 1 {
		return 1152
	}
	return 576
}

// size is the frame's length in bytes, its header included.
func (h mp3Header) size() int {
	return h.samples()/8*h.bitrate/h.sampleRate + h.padding
}

// sideInfo is where a Xing or Info tag starts in the first frame.
func (h mp3Header) sideInfo() int {
	n := 4
	if h.crc {
		n += 2
	}
	switch {
	case h.version == 1 && !h.mono:
		return n + 32
	case h.version == 1, !h.mono:
		return n + 17
	}
	return n + 9
}

func (h mp3Header) sameStream(o mp3Header) bool {
	return h.version == o.version && h.sampleRate == o.sampleRate
}

func isMP3Sync(b []byte) bool {
	_, ok := parseMP3Header(b)
	return ok
}

// mp3 walks every frame header of an MP3 stream, skipping the frames'
// data: the duration is the frames counted (less the encoder's delay and
// padding when a LAME tag states them), and a stream whose Xing or VBRI
// header declares more frames than are there is cut short. Bytes that are
// not frames (junk between frames, a trailing ID3v1 or APE tag) are
// skipped, but a file that is mostly not frames is refused.
func (s *stream) mp3(afterID3 bool) (Info, error) {
	s.what = "MP3"
	var (
		first          mp3Header
		started        bool
		frames         int64
		frameBytes     int64
		junk           int64
		declared       int64 // frames a Xing or VBRI header states
		delay, padding int64
	)
	for {
		b := s.peek(4)
		if len(b) < 4 {
			junk += int64(len(b))
			break
		}
		h, ok := parseMP3Header(b)
		if ok && (!started || h.sameStream(first)) && (started || s.confirmed(h)) {
			n := h.size()
			if !started {
				started, first = true, h
				if d, dl, pd, isTag := xingTag(s.peek(n), h); isTag {
					declared, delay, padding = d, dl, pd
					if err := s.skip(int64(n)); err != nil {
						return Info{}, s.truncated(err, "its first frame")
					}
					frameBytes += int64(n)
					continue
				}
			}
			if err := s.skip(int64(n)); err != nil {
				if err == errEOF {
					break // a last frame cut short is not played; the Xing check below catches real loss
				}
				return Info{}, err
			}
			frames++
			frameBytes += int64(n)
			continue
		}
		if started {
			if bytes.HasPrefix(b, []byte("TAG")) {
				if err := s.skip(128); err != nil {
					return Info{}, s.truncated(err, "its ID3v1 tag")
				}
				continue
			}
			if t := s.peek(32); len(t) == 32 && bytes.HasPrefix(t, []byte("APETAGEX")) {
				n := int64(binary.LittleEndian.Uint32(t[12:16]))
				if binary.LittleEndian.Uint32(t[20:24])&(1<<29) != 0 { // this is the tag's header: its footer follows the items
					n += 32
				}
				if err := s.skip(n); err != nil {
					return Info{}, s.truncated(err, "its APE tag")
				}
				continue
			}
		}
		// Not a frame here: look for the next 0xFF, the only byte a frame
		// starts with.
		b = s.peek(bufSize)
		i := bytes.IndexByte(b[1:], 0xFF) + 1
		if i == 0 {
			i = len(b)
		}
		if err := s.skip(int64(i)); err != nil {
			return Info{}, err
		}
		junk += int64(i)
	}
	if frames == 0 {
		if afterID3 {
			return Info{}, refuse(Malformed, "not an MP3 file: no MP3 frames follow its ID3 tag")
		}
		return Info{}, refuse(Malformed, "not an MP3 file: it holds no complete MP3 frames")
	}
	if junk > 4096 && junk > frameBytes/10 {
		return Info{}, refuse(Malformed, "not an MP3 file: %d of its bytes are not MP3 frames (%d are)", junk, frameBytes)
	}
	rate := int64(first.sampleRate)
	samples := frames * int64(first.samples())
	if declared > 0 && frames+1 < declared {
		return Info{}, refuse(Truncated, "the MP3 file is cut short: it ends after %s of the %s its header declares",
			Seconds(time.Duration(samples*int64(time.Second)/rate)), Seconds(time.Duration(declared*int64(first.samples())*int64(time.Second)/rate)))
	}
	if delay+padding < samples {
		samples -= delay + padding
	}
	info := Info{Kind: Audio, MIME: MIMEMP3, Ext: ".mp3", Container: "MP3", Codec: "mp3", SampleRate: first.sampleRate, Channels: 2}
	if first.mono {
		info.Channels = 1
	}
	info.AudioCodec = info.Codec
	info.Duration = time.Duration(samples * int64(time.Second) / rate)
	return info, nil
}

// confirmed reports whether the frame h starting here is followed by
// another frame of the same stream (or the end of the file): a lone
// four-byte match in other data is one in a few hundred thousand, two in a
// row at the right distance is none.
func (s *stream) confirmed(h mp3Header) bool {
	n := h.size()
	b := s.peek(n + 4)
	if len(b) < n+4 {
		return len(b) == n
	}
	next, ok := parseMP3Header(b[n:])
	return ok && next.sameStream(h)
}

// xingTag reads the Xing/Info or VBRI header a VBR encoder writes in the
// first frame (which holds no sound): the stream's frame count, and from
// LAME's extension the encoder's delay and padding in samples.
func xingTag(frame []byte, h mp3Header) (frames, delay, padding int64, ok bool) {
	if o := h.sideInfo(); len(frame) >= o+8 && (string(frame[o:o+4]) == "Xing" || string(frame[o:o+4]) == "Info") {
		flags := binary.BigEndian.Uint32(frame[o+4 : o+8])
		p := o + 8
		if flags&1 != 0 && len(frame) >= p+4 {
			frames = int64(binary.BigEndian.Uint32(frame[p : p+4]))
			p += 4
		}
		if flags&2 != 0 {
			p += 4
		}
		if flags&4 != 0 {
			p += 100
		}
		if flags&8 != 0 {
			p += 4
		}
		// LAME's extension: a 9-byte encoder name, then 12 bytes, then the
		// delay and padding as two 12-bit numbers.
		if len(frame) >= p+24 && isLetters(frame[p:p+4]) {
			v := int64(frame[p+21])<<16 | int64(frame[p+22])<<8 | int64(frame[p+23])
			delay, padding = v>>12, v&0xFFF
		}
		return frames, delay, padding, true
	}
	if len(frame) >= 36+18 && string(frame[36:40]) == "VBRI" {
		return int64(binary.BigEndian.Uint32(frame[36+14 : 36+18])), 0, 0, true
	}
	return 0, 0, 0, false
}

func isLetters(b []byte) bool {
	for _, c := range b {
		if (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}
