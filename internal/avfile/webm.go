package avfile

import (
	"encoding/binary"
	"math"
	"time"
)

// The EBML and Matroska element IDs read (with their length markers).
const (
	idEBML          = 0x1A45DFA3
	idDocType       = 0x4282
	idSegment       = 0x18538067
	idInfo          = 0x1549A966
	idTimecodeScale = 0x2AD7B1
	idDuration      = 0x4489
	idTracks        = 0x1654AE6B
	idTrackEntry    = 0xAE
	idTrackType     = 0x83
	idCodecID       = 0x86
	idVideo         = 0xE0
	idPixelWidth    = 0xB0
	idPixelHeight   = 0xBA
	idAudio         = 0xE1
	idSampling      = 0xB5
	idChannels      = 0x9F
	idCluster       = 0x1F43B675
	idTimecode      = 0xE7
	idSimpleBlock   = 0xA3
	idBlockGroup    = 0xA0
	idBlock         = 0xA1
	idCues          = 0x1C53BB6B
	idTags          = 0x1254C367
	idSeekHead      = 0x114D9B74
	idChapters      = 0x1043A770
	idAttachments   = 0x1941A469
)

// segmentChild reports whether id is an element of the Segment's level: an
// unknown-size Cluster (as a browser's MediaRecorder writes) ends where one
// starts.
func segmentChild(id uint32) bool {
	switch id {
	case idCluster, idCues, idTags, idSeekHead, idChapters, idAttachments, idInfo, idTracks:
		return true
	}
	return false
}

type webmTrack struct {
	kind          uint64 // 1 video, 2 audio
	codec         string
	width, height int
	rate          float64
	channels      int
}

// webm reads a WebM file (the Matroska subset browsers play): the EBML
// header's DocType, the Segment's Info (TimecodeScale, Duration) and
// Tracks, and then every Cluster's block timestamps with the blocks' data
// skipped, which both shows the file is whole and gives the length when
// Info states none (a recording straight from a browser).
func (s *stream) webm() (Info, error) {
	s.what = "WebM"
	id, n, err := s.element()
	if err != nil {
		return Info{}, s.truncated(err, "its EBML header")
	}
	if id != idEBML || n < 0 || n > 4096 {
		return Info{}, refuse(Malformed, "not a WebM file: its EBML header is invalid")
	}
	head, err := s.read(int(n))
	if err != nil {
		return Info{}, s.truncated(err, "its EBML header")
	}
	var docType string
	if err := children(head, func(id uint32, b []byte) error {
		if id == idDocType {
			docType = string(b)
		}
		return nil
	}); err != nil {
		return Info{}, err
	}
	switch docType {
	case "webm":
	case "matroska":
		return Info{}, refuse(Unsupported, "a Matroska (.mkv) file; closer accepts videos as WebM or MP4")
	default:
		return Info{}, refuse(Malformed, "not a WebM file: its EBML header's document type is %q", docType)
	}
	id, n, err = s.element()
	if err != nil {
		return Info{}, s.truncated(err, "its Segment")
	}
	if id != idSegment {
		return Info{}, refuse(Malformed, "not a WebM file: no Segment follows its EBML header")
	}
	segEnd := int64(-1)
	if n >= 0 {
		segEnd = s.pos + n
		if s.size >= 0 && segEnd > s.size {
			return Info{}, refuse(Truncated, "the WebM file is cut short: its Segment needs %d bytes more than the file has", segEnd-s.size)
		}
	}
	var (
		scale       uint64 = 1_000_000
		stated      float64
		tracks      []webmTrack
		haveInfo    bool
		haveTracks  bool
		first, last int64 = -1, 0 // the earliest and latest blocks' times, in scale units
		blocks      int64
	)
	for segEnd < 0 || s.pos < segEnd {
		if s.atEOF() {
			if segEnd >= 0 {
				return Info{}, refuse(Truncated, "the WebM file is cut short: it ends inside its Segment")
			}
			break
		}
		id, n, err := s.element()
		if err != nil {
			return Info{}, s.truncated(err, "an element header")
		}
		switch id {
		case idInfo, idTracks:
			if n < 0 || n > bufSize {
				return Info{}, refuse(Malformed, "not a WebM file: its %s element is %d bytes", elementName(id), n)
			}
			b, err := s.read(int(n))
			if err != nil {
				return Info{}, s.truncated(err, "its "+elementName(id))
			}
			if id == idInfo {
				haveInfo = true
				err = webmInfo(b, &scale, &stated)
			} else {
				haveTracks = true
				tracks, err = webmTracks(b)
			}
			if err != nil {
				return Info{}, err
			}
		case idCluster:
			lo, hi, k, err := s.cluster(n)
			if err != nil {
				return Info{}, s.truncated(err, "a Cluster")
			}
			if k > 0 {
				if first < 0 || lo < first {
					first = lo
				}
				last, blocks = max(last, hi), blocks+k
			}
		default:
			if n < 0 {
				return Info{}, refuse(Malformed, "not a WebM file: an element of unknown size that is not a Cluster")
			}
			if err := s.skip(n); err != nil {
				return Info{}, s.truncated(err, "an element")
			}
		}
	}
	if !haveInfo || !haveTracks {
		return Info{}, refuse(Malformed, "not a WebM file: its Segment has no Info or no Tracks")
	}
	if blocks == 0 {
		return Info{}, refuse(Malformed, "the WebM file holds no frames")
	}
	info, err := webmKind(tracks)
	if err != nil {
		return Info{}, err
	}
	// With no stated Duration, the last block lasts as long as blocks
	// do on average (a recording's frames are evenly spaced).
	end := float64(last)
	if blocks > 1 && last > first {
		end += float64(last-first) / float64(blocks-1)
	}
	sec := end * float64(scale) / 1e9
	if stated > 0 {
		sec = stated * float64(scale) / 1e9
	}
	if sec > 1e9 || math.IsNaN(sec) {
		sec = 1e9
	}
	info.Duration = time.Duration(sec * float64(time.Second))
	return info, nil
}

// cluster walks one Cluster's children: its Timecode and each block's
// relative timestamp, the blocks' frames skipped. It returns the latest
// block time and the number of blocks.
func (s *stream) cluster(n int64) (first, last, blocks int64, err error) {
	end := int64(-1)
	if n >= 0 {
		end = s.pos + n
	}
	var base int64
	for end < 0 || s.pos < end {
		if end < 0 {
			if s.atEOF() {
				break
			}
			if id, _, ok := peekID(s.peek(4)); ok && (segmentChild(id) || id == idSegment) {
				break
			}
		}
		id, m, err := s.element()
		if err != nil {
			return 0, 0, 0, err
		}
		if m < 0 {
			return 0, 0, 0, refuse(Malformed, "not a WebM file: an element of unknown size inside a Cluster")
		}
		if end >= 0 && s.pos+m > end {
			return 0, 0, 0, refuse(Malformed, "not a WebM file: an element overruns its Cluster")
		}
		switch id {
		case idTimecode:
			if m > 8 {
				return 0, 0, 0, refuse(Malformed, "not a WebM file: a Cluster's Timecode is %d bytes", m)
			}
			b, err := s.read(int(m))
			if err != nil {
				return 0, 0, 0, err
			}
			base = int64(min(uintOf(b), 1<<53))
		case idBlockGroup:
			continue // its children (Block and the rest) follow at this level
		case idSimpleBlock, idBlock:
			t, err := s.blockTime(m)
			if err != nil {
				return 0, 0, 0, err
			}
			if blocks == 0 || base+t < first {
				first = base + t
			}
			last, blocks = max(last, base+t), blocks+1
		default:
			if err := s.skip(m); err != nil {
				return 0, 0, 0, err
			}
		}
	}
	return first, last, blocks, nil
}

// blockTime reads a block's track number and 16-bit relative timestamp
// and skips its frames.
func (s *stream) blockTime(m int64) (int64, error) {
	b := s.peek(12)
	_, w, ok := vint(b)
	if (!ok || len(b) < w+2) && len(b) < 12 {
		return 0, errEOF
	}
	if !ok || int64(w+2) > m {
		return 0, refuse(Malformed, "not a WebM file: a block's header is invalid")
	}
	t := int64(int16(binary.BigEndian.Uint16(b[w : w+2])))
	return t, s.skip(m)
}

// element reads an element's ID and size (-1: unknown).
func (s *stream) element() (uint32, int64, error) {
	b := s.peek(12)
	id, w, ok := peekID(b)
	if !ok {
		if len(b) < 4 {
			return 0, 0, errEOF
		}
		return 0, 0, refuse(Malformed, "not a WebM file: an invalid element ID at byte %d", s.pos)
	}
	n, k, ok := vint(b[w:])
	if !ok {
		if len(b) < w+8 {
			return 0, 0, errEOF
		}
		return 0, 0, refuse(Malformed, "not a WebM file: an invalid element size at byte %d", s.pos)
	}
	if _, err := s.read(w + k); err != nil {
		return 0, 0, err
	}
	if n == 1<<(7*k)-1 { // all ones: unknown size
		return id, -1, nil
	}
	return id, int64(n), nil
}

// peekID decodes an element ID (1 to 4 bytes, the length marker kept).
func peekID(b []byte) (uint32, int, bool) {
	if len(b) == 0 || b[0] == 0 || b[0] < 0x10 {
		return 0, 0, false
	}
	w := 1
	for b[0]&(0x80>>(w-1)) == 0 {
		w++
	}
	if len(b) < w {
		return 0, 0, false
	}
	var id uint32
	for _, c := range b[:w] {
		id = id<<8 | uint32(c)
	}
	return id, w, true
}

// vint decodes a variable-length integer (1 to 8 bytes, marker removed).
func vint(b []byte) (uint64, int, bool) {
	if len(b) == 0 || b[0] == 0 {
		return 0, 0, false
	}
	w := 1
	for b[0]&(0x80>>(w-1)) == 0 {
		w++
	}
	if len(b) < w {
		return 0, 0, false
	}
	v := uint64(b[0] & (0xFF >> w))
	for _, c := range b[1:w] {
		v = v<<8 | uint64(c)
	}
	return v, w, true
}

// children calls fn with each child element of an element read whole.
func children(b []byte, fn func(id uint32, body []byte) error) error {
	for len(b) > 0 {
		id, w, ok := peekID(b)
		if !ok {
			return refuse(Malformed, "not a WebM file: an invalid element ID in a header")
		}
		n, k, ok := vint(b[w:])
		if !ok || n > uint64(len(b)-w-k) {
			return refuse(Malformed, "not a WebM file: an element overruns the header that holds it")
		}
		if err := fn(id, b[w+k:w+k+int(n)]); err != nil {
			return err
		}
		b = b[w+k+int(n):]
	}
	return nil
}

func uintOf(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

func floatOf(b []byte) float64 {
	switch len(b) {
	case 4:
		return float64(math.Float32frombits(binary.BigEndian.Uint32(b)))
	case 8:
		return math.Float64frombits(binary.BigEndian.Uint64(b))
	}
	return 0
}

func webmInfo(b []byte, scale *uint64, stated *float64) error {
	return children(b, func(id uint32, body []byte) error {
		switch id {
		case idTimecodeScale:
			if len(body) > 8 || uintOf(body) == 0 {
				return refuse(Malformed, "not a WebM file: its TimecodeScale is invalid")
			}
			*scale = uintOf(body)
		case idDuration:
			d := floatOf(body)
			if d < 0 || math.IsNaN(d) || math.IsInf(d, 0) {
				return refuse(Malformed, "not a WebM file: its Duration is invalid")
			}
			*stated = d
		}
		return nil
	})
}

func webmTracks(b []byte) ([]webmTrack, error) {
	var tracks []webmTrack
	err := children(b, func(id uint32, body []byte) error {
		if id != idTrackEntry {
			return nil
		}
		if len(tracks) == maxTracks {
			return refuse(Unsupported, "a WebM file with more than %d tracks", maxTracks)
		}
		var t webmTrack
		err := children(body, func(id uint32, v []byte) error {
			switch id {
			case idTrackType:
				t.kind = uintOf(v)
			case idCodecID:
				t.codec = string(v)
			case idVideo:
				return children(v, func(id uint32, v []byte) error {
					switch id {
					case idPixelWidth:
						t.width = int(min(uintOf(v), 1<<30))
					case idPixelHeight:
						t.height = int(min(uintOf(v), 1<<30))
					}
					return nil
				})
			case idAudio:
				return children(v, func(id uint32, v []byte) error {
					switch id {
					case idSampling:
						t.rate = floatOf(v)
					case idChannels:
						t.channels = int(min(uintOf(v), 1<<10))
					}
					return nil
				})
			}
			return nil
		})
		tracks = append(tracks, t)
		return err
	})
	return tracks, err
}

func webmKind(tracks []webmTrack) (Info, error) {
	var video, sound *webmTrack
	for i := range tracks {
		t := &tracks[i]
		switch {
		case t.kind == 1 && video == nil:
			video = t
		case t.kind == 2 && sound == nil:
			sound = t
		}
	}
	if video == nil {
		if sound != nil {
			return Info{}, refuse(Unsupported, "a WebM file with sound only; closer accepts sounds as WAV, MP3, Ogg (Opus or Vorbis), FLAC or M4A")
		}
		return Info{}, refuse(Malformed, "the WebM file has no picture track")
	}
	info := Info{Kind: Video, MIME: MIMEWebM, Ext: ".webm", Container: "WebM", Width: video.width, Height: video.height}
	switch video.codec {
	case "V_VP8":
		info.Codec = "vp8"
	case "V_VP9":
		info.Codec = "vp9"
	case "V_AV1":
		info.Codec = "av1"
	default:
		return Info{}, refuse(Unsupported, "a WebM video coded as %q; closer accepts VP8, VP9 or AV1", video.codec)
	}
	if sound != nil {
		switch sound.codec {
		case "A_OPUS":
			info.AudioCodec = "opus"
		case "A_VORBIS":
			info.AudioCodec = "vorbis"
		default:
			return Info{}, refuse(Unsupported, "a WebM video whose sound is coded as %q; closer accepts Opus or Vorbis", sound.codec)
		}
		info.SampleRate, info.Channels = int(min(max(sound.rate, 0), 1e7)), sound.channels
	}
	return info, nil
}

func elementName(id uint32) string {
	if id == idInfo {
		return "Info"
	}
	return "Tracks"
}
