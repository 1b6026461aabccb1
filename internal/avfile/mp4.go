package avfile

import (
	"encoding/binary"
	"time"
)

// maxTracks bounds the tracks of one MP4 file.
const maxTracks = 16

// maxBoxDepth bounds how deep the boxes read may nest.
const maxBoxDepth = 8

// mp4Track is what one trak box says.
type mp4Track struct {
	handler       string // "vide", "soun", …
	entry         string // the first sample entry's type: "avc1", "mp4a", …
	timescale     uint32
	duration      uint64
	width, height int
	rate          int
	channels      int
}

// mp4Movie is what the boxes of an MP4 file say.
type mp4Movie struct {
	brand     string
	timescale uint32
	duration  uint64 // mvhd's, in timescale units
	fragment  uint64 // mehd's, for a fragmented file
	tracks    []mp4Track
	moov      bool
	mdat      bool
}

// mp4 reads an ISO base media file (ISO/IEC 14496-12) box by box: ftyp
// first, then the movie box's header (mvhd) and each track's media header
// (mdhd), handler (hdlr) and first sample description (stsd); every other
// box, the media data above all, is skipped.
func (s *stream) mp4() (Info, error) {
	s.what = "MP4"
	var m mp4Movie
	err := s.boxes(-1, func(typ string, n int64) error {
		switch {
		case m.brand == "" && typ != "ftyp":
			return refuse(Malformed, "not an MP4 file: it does not start with an ftyp box")
		case typ == "ftyp":
			if m.brand != "" || n < 8 {
				return refuse(Malformed, "not an MP4 file: its ftyp box is invalid")
			}
			b, err := s.read(8)
			if err != nil {
				return err
			}
			m.brand = string(b[:4])
			if m.brand == "qt  " {
				return refuse(Unsupported, "a QuickTime movie (.mov); closer accepts videos as MP4 (H.264 and AAC) or WebM")
			}
			if m.brand[:3] == "3gp" || m.brand[:3] == "3g2" {
				return refuse(Unsupported, "a 3GPP file; closer accepts MP4 (H.264 and AAC) or M4A (AAC)")
			}
		case typ == "moov":
			if m.moov {
				return refuse(Malformed, "not an MP4 file: it has two moov boxes")
			}
			m.moov = true
			return s.boxes(s.pos+n, m.moovBox(s))
		case typ == "mdat":
			m.mdat = true
			if n < 0 {
				return s.drain()
			}
		}
		return nil
	})
	if err != nil {
		return Info{}, s.truncated(err, "a box")
	}
	if !m.moov {
		return Info{}, refuse(Malformed, "not an MP4 file: it has no moov box (the header that says what it holds)")
	}
	if !m.mdat {
		return Info{}, refuse(Malformed, "the MP4 file holds no media data")
	}
	return m.info()
}

// moovBox visits the movie box's children and the track boxes within.
func (m *mp4Movie) moovBox(s *stream) func(string, int64) error {
	var visit func(string, int64) error
	visit = func(typ string, n int64) error {
		switch typ {
		case "mvhd":
			b, err := s.readBox(n, 32)
			if err != nil {
				return err
			}
			if b[0] == 1 {
				m.timescale, m.duration = binary.BigEndian.Uint32(b[20:24]), binary.BigEndian.Uint64(b[24:32])
			} else {
				m.timescale, m.duration = binary.BigEndian.Uint32(b[12:16]), uint64(binary.BigEndian.Uint32(b[16:20]))
			}
		case "mvex":
			return s.boxes(s.pos+n, visit)
		case "mehd":
			b, err := s.readBox(n, 12)
			if err != nil {
				return err
			}
			if b[0] == 1 {
				m.fragment = binary.BigEndian.Uint64(b[4:12])
			} else {
				m.fragment = uint64(binary.BigEndian.Uint32(b[4:8]))
			}
		case "trak":
			if len(m.tracks) == maxTracks {
				return refuse(Unsupported, "an MP4 file with more than %d tracks", maxTracks)
			}
			m.tracks = append(m.tracks, mp4Track{})
			return s.boxes(s.pos+n, m.trakBox(s, &m.tracks[len(m.tracks)-1]))
		}
		return nil
	}
	return visit
}

// trakBox visits one track's boxes down to its sample description.
func (m *mp4Movie) trakBox(s *stream, t *mp4Track) func(string, int64) error {
	var visit func(string, int64) error
	visit = func(typ string, n int64) error {
		switch typ {
		case "mdia", "minf", "stbl":
			return s.boxes(s.pos+n, visit)
		case "mdhd":
			b, err := s.readBox(n, 24)
			if err != nil {
				return err
			}
			if b[0] == 1 {
				if len(b) < 32 {
					return refuse(Malformed, "not an MP4 file: a track's mdhd box is too short")
				}
				t.timescale, t.duration = binary.BigEndian.Uint32(b[20:24]), binary.BigEndian.Uint64(b[24:32])
			} else {
				t.timescale, t.duration = binary.BigEndian.Uint32(b[12:16]), uint64(binary.BigEndian.Uint32(b[16:20]))
			}
		case "hdlr":
			b, err := s.readBox(n, 12)
			if err != nil {
				return err
			}
			t.handler = string(b[8:12])
		case "stsd":
			b, err := s.readBox(n, 16)
			if err != nil {
				return err
			}
			if binary.BigEndian.Uint32(b[4:8]) == 0 {
				return refuse(Malformed, "not an MP4 file: a track has no sample description")
			}
			e := b[8:]
			size := binary.BigEndian.Uint32(e[0:4])
			if size < 8 || int64(size) > int64(len(e)) {
				return refuse(Malformed, "not an MP4 file: a track's sample description is invalid")
			}
			t.entry = string(e[4:8])
			switch {
			case size >= 36 && t.handler == "vide":
				t.width, t.height = int(binary.BigEndian.Uint16(e[32:34])), int(binary.BigEndian.Uint16(e[34:36]))
			case size >= 36 && t.handler == "soun":
				t.channels = int(binary.BigEndian.Uint16(e[24:26]))
				t.rate = int(binary.BigEndian.Uint16(e[32:34]))
			}
		}
		return nil
	}
	return visit
}

// readBox reads a leaf box's n bytes (at least least of them).
func (s *stream) readBox(n int64, least int) ([]byte, error) {
	if n < int64(least) {
		return nil, refuse(Malformed, "not an MP4 file: a box is too short")
	}
	if n > bufSize {
		return nil, refuse(Malformed, "not an MP4 file: a header box is %d bytes", n)
	}
	return s.read(int(n))
}

// info chooses what the file is from its tracks.
func (m *mp4Movie) info() (Info, error) {
	var video, sound *mp4Track
	for i := range m.tracks {
		t := &m.tracks[i]
		switch {
		case t.handler == "vide" && video == nil:
			video = t
		case t.handler == "soun" && sound == nil:
			sound = t
		}
	}
	info := Info{Kind: Audio, MIME: MIMEM4A, Ext: ".m4a", Container: "M4A"}
	if video != nil {
		info = Info{Kind: Video, MIME: MIMEMP4, Ext: ".mp4", Container: "MP4", Width: video.width, Height: video.height}
		switch video.entry {
		case "avc1", "avc3":
			info.Codec = "h264"
		default:
			return Info{}, refuse(Unsupported, "an MP4 video coded as %s; closer accepts H.264 (avc1) video in MP4", printable(video.entry))
		}
	} else if sound == nil {
		return Info{}, refuse(Malformed, "the MP4 file has neither a sound nor a picture track")
	}
	if sound != nil {
		if sound.entry != "mp4a" {
			return Info{}, refuse(Unsupported, "an %s whose sound is coded as %s; closer accepts AAC (mp4a) sound in %s", info.Container, printable(sound.entry), info.Container)
		}
		info.AudioCodec, info.SampleRate, info.Channels = "aac", sound.rate, sound.channels
		if video == nil {
			info.Codec = "aac"
		}
	}
	// The movie's duration is its presentation (edits applied); a
	// fragmented file states it in mehd; failing both, the longest track.
	switch {
	case m.timescale > 0 && m.duration > 0:
		info.Duration = ticks(m.duration, m.timescale)
	case m.timescale > 0 && m.fragment > 0:
		info.Duration = ticks(m.fragment, m.timescale)
	default:
		for _, t := range m.tracks {
			if t.timescale > 0 {
				info.Duration = max(info.Duration, ticks(t.duration, t.timescale))
			}
		}
	}
	return info, nil
}

// ticks converts a count of 1/scale seconds, saturating far beyond any
// limit rather than overflowing.
func ticks(n uint64, scale uint32) time.Duration {
	sec := float64(n) / float64(scale)
	if sec > 1e9 {
		return time.Duration(1e9) * time.Second
	}
	return time.Duration(sec * float64(time.Second))
}

// boxes reads the boxes from here to end (-1: the end of the file), calling
// visit with each box's type and payload length (-1: to the end of the
// file) positioned at its payload; whatever of the payload visit leaves
// unread is skipped.
func (s *stream) boxes(end int64, visit func(typ string, n int64) error) error {
	// The boxes read nest five deep (moov, trak, mdia, minf, stbl); a
	// file nesting them deeper would otherwise grow the stack with it.
	s.depth++
	defer func() { s.depth-- }()
	if s.depth > maxBoxDepth {
		return refuse(Malformed, "not an MP4 file: its boxes nest more than %d deep", maxBoxDepth)
	}
	for end < 0 || s.pos < end {
		if end < 0 && s.atEOF() {
			return nil
		}
		start := s.pos
		h, err := s.read(8)
		if err != nil {
			return err
		}
		size, typ := int64(binary.BigEndian.Uint32(h[:4])), string(h[4:8])
		switch size {
		case 1:
			x, err := s.read(8)
			if err != nil {
				return err
			}
			u := binary.BigEndian.Uint64(x)
			if u > 1<<62 {
				return refuse(Malformed, "not an MP4 file: the %s box claims %d bytes", printable(typ), u)
			}
			size = int64(u)
		case 0: // to the end of the enclosing box, or of the file
			switch {
			case end >= 0:
				size = end - start
			case s.size >= 0:
				size = s.size - start
			default:
				size = -1
			}
		}
		var n int64 = -1
		if size >= 0 {
			n = size - (s.pos - start)
			if n < 0 {
				return refuse(Malformed, "not an MP4 file: the %s box at byte %d is shorter than its header", printable(typ), start)
			}
			if end >= 0 && s.pos+n > end {
				return refuse(Malformed, "not an MP4 file: the %s box at byte %d overruns the box that holds it", printable(typ), start)
			}
			if s.size >= 0 && s.pos+n > s.size {
				return refuse(Truncated, "the MP4 file is cut short: its %s box needs %d bytes more than the file has", printable(typ), s.pos+n-s.size)
			}
		}
		if n < 0 && typ != "mdat" {
			return refuse(Malformed, "not an MP4 file: its %s box does not state its size", printable(typ))
		}
		bodyEnd := s.pos + n
		if err := visit(typ, n); err != nil {
			return err
		}
		if n < 0 {
			return nil
		}
		if s.pos > bodyEnd {
			return refuse(Malformed, "not an MP4 file: the %s box at byte %d is shorter than its content", printable(typ), start)
		}
		if err := s.skip(bodyEnd - s.pos); err != nil {
			return err
		}
	}
	return nil
}
