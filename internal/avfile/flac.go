package avfile

import (
	"encoding/binary"
	"time"
)

// maxFLACBlocks bounds the metadata blocks read before the audio.
const maxFLACBlocks = 1000

// flac reads a FLAC stream's metadata: STREAMINFO (always first) states the
// sample rate and the number of samples; the other blocks (tags, seek
// table, pictures) are skipped, and the audio must start with a frame.
func (s *stream) flac() (Info, error) {
	s.what = "FLAC"
	if _, err := s.read(4); err != nil {
		return Info{}, s.truncated(err, "its signature")
	}
	info := Info{Kind: Audio, MIME: MIMEFLAC, Ext: ".flac", Container: "FLAC", Codec: "flac", AudioCodec: "flac"}
	var total, blockSize int64
	for i := 0; ; i++ {
		if i == maxFLACBlocks {
			return Info{}, refuse(Malformed, "not a FLAC file: more than %d metadata blocks", maxFLACBlocks)
		}
		h, err := s.read(4)
		if err != nil {
			return Info{}, s.truncated(err, "its metadata")
		}
		last, typ := h[0]&0x80 != 0, h[0]&0x7F
		n := int64(h[1])<<16 | int64(h[2])<<8 | int64(h[3])
		switch {
		case i == 0 && (typ != 0 || n != 34):
			return Info{}, refuse(Malformed, "not a FLAC file: its first metadata block is not STREAMINFO")
		case i == 0:
			b, err := s.read(34)
			if err != nil {
				return Info{}, s.truncated(err, "its STREAMINFO block")
			}
			blockSize = int64(binary.BigEndian.Uint16(b[2:4])) // the largest: every frame of a fixed-size stream but the last has it
			v := binary.BigEndian.Uint64(b[10:18])
			info.SampleRate = int(v >> 44)
			info.Channels = int(v>>41&7) + 1
			total = int64(v & (1<<36 - 1))
			if info.SampleRate == 0 {
				return Info{}, refuse(Malformed, "not a FLAC file: its STREAMINFO states a sample rate of 0")
			}
		case typ == 127:
			return Info{}, refuse(Malformed, "not a FLAC file: a metadata block of the invalid type 127")
		default:
			if err := s.skip(n); err != nil {
				return Info{}, s.truncated(err, "its metadata")
			}
		}
		if last {
			break
		}
	}
	if b := s.peek(2); len(b) < 2 || b[0] != 0xFF || b[1]&0xFE != 0xF8 {
		if len(b) < 2 {
			return Info{}, refuse(Truncated, "the FLAC file is cut short: no audio follows its metadata")
		}
		return Info{}, refuse(Malformed, "not a FLAC file: its audio does not start with a frame")
	}
	if total == 0 {
		return Info{}, refuse(Malformed, "the FLAC file does not state how many samples it holds")
	}
	end, err := s.flacFrames(blockSize)
	if err != nil {
		return Info{}, err
	}
	if end < total {
		rate := float64(info.SampleRate)
		return Info{}, refuse(Truncated, "the FLAC file is cut short: its frames end after %s of the %s it declares",
			Seconds(time.Duration(float64(end)/rate*float64(time.Second))), Seconds(time.Duration(float64(total)/rate*float64(time.Second))))
	}
	info.Duration = time.Duration(float64(total) / float64(info.SampleRate) * float64(time.Second))
	return info, nil
}

// flacFrames reads the rest of the stream, finding each frame header by
// its sync code and CRC-8 without decoding the audio, and returns the
// sample at which the last frame ends: a file cut short ends before the
// samples STREAMINFO declares. blockSize is STREAMINFO's largest block,
// the size of every frame of a fixed-blocksize stream but the last.
func (s *stream) flacFrames(blockSize int64) (int64, error) {
	var end int64
	for {
		b := s.peek(bufSize)
		if len(b) < 2 {
			return end, s.skip(int64(len(b)))
		}
		// A header is at most 16 bytes: look for one starting in the
		// window's first len-16 bytes unless this is the end of the file.
		scan := len(b) - 16
		if len(b) < bufSize {
			scan = len(b) - 1
		}
		for i := 0; i < scan; i++ {
			if b[i] != 0xFF || b[i+1]&0xFE != 0xF8 {
				continue
			}
			if e, ok := flacFrameEnd(b[i:], blockSize); ok {
				end = max(end, e)
			}
		}
		if err := s.skip(int64(max(scan, 1))); err != nil {
			return 0, err
		}
	}
}

// flacFrameEnd decodes a frame header (sync, block size and sample rate
// codes, channels, sample size, the coded frame or sample number, the
// optional sizes and the CRC-8) and returns the sample after its block.
func flacFrameEnd(b []byte, blockSize int64) (int64, bool) {
	if len(b) < 6 || b[3]&1 != 0 || b[2]>>4 == 0 || b[2]&0xF == 15 || b[3]>>4 > 10 || (b[3]>>1)&7 == 3 || (b[3]>>1)&7 == 7 {
		return 0, false
	}
	variable := b[1]&1 == 1
	// The frame or sample number, coded like UTF-8 in 1 to 7 bytes.
	p := 4
	c := b[p]
	var n int64
	var extra int
	switch {
	case c < 0x80:
		n = int64(c)
	case c&0xE0 == 0xC0:
		n, extra = int64(c&0x1F), 1
	case c&0xF0 == 0xE0:
		n, extra = int64(c&0x0F), 2
	case c&0xF8 == 0xF0:
		n, extra = int64(c&0x07), 3
	case c&0xFC == 0xF8:
		n, extra = int64(c&0x03), 4
	case c&0xFE == 0xFC:
		n, extra = int64(c&0x01), 5
	case c == 0xFE:
		n, extra = 0, 6
	default:
		return 0, false
	}
	p++
	if len(b) < p+extra+1 {
		return 0, false
	}
	for _, d := range b[p : p+extra] {
		if d&0xC0 != 0x80 {
			return 0, false
		}
		n = n<<6 | int64(d&0x3F)
	}
	p += extra
	var size int64
	switch code := b[2] >> 4; {
	case code == 1:
		size = 192
	case code <= 5:
		size = 576 << (code - 2)
	case code == 6:
		if len(b) < p+1 {
			return 0, false
		}
		size, p = int64(b[p])+1, p+1
	case code == 7:
		if len(b) < p+2 {
			return 0, false
		}
		size, p = int64(binary.BigEndian.Uint16(b[p:p+2]))+1, p+2
	default:
		size = 256 << (code - 8)
	}
	switch b[2] & 0xF {
	case 12:
		p++
	case 13, 14:
		p += 2
	}
	if len(b) < p+1 || crc8(b[:p]) != b[p] {
		return 0, false
	}
	if variable {
		return n + size, true
	}
	return n*blockSize + size, true
}

// crc8 is FLAC's header checksum (polynomial x^8+x^2+x+1, initial 0).
func crc8(b []byte) byte {
	var c byte
	for _, x := range b {
		c ^= x
		for range 8 {
			if c&0x80 != 0 {
				c = c<<1 ^ 0x07
			} else {
				c <<= 1
			}
		}
	}
	return c
}
