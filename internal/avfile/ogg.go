package avfile

import (
	"encoding/binary"
	"time"
)

// ogg walks the pages of an Ogg stream (RFC 3533), reading their headers
// and skipping their data: the first packet names the codec (Opus, RFC
// 7845, or Vorbis I), the last page's granule position says how many
// samples the stream holds, and the end-of-stream flag that the last page
// must carry shows the file was not cut short.
func (s *stream) ogg() (Info, error) {
	s.what = "Ogg"
	info := Info{Kind: Audio, MIME: MIMEOgg, Ext: ".ogg", Container: "Ogg"}
	var (
		serial  uint32
		seq     uint32
		pages   int64
		granule int64 = -1
		preSkip int64
		eos     bool
	)
	for !s.atEOF() {
		h, err := s.read(27)
		if err != nil {
			return Info{}, s.truncated(err, "a page header")
		}
		if string(h[:4]) != "OggS" || h[4] != 0 {
			return Info{}, refuse(Malformed, "not an Ogg file: the data at byte %d is not an Ogg page", s.pos-27)
		}
		flags := h[5]
		gp := int64(binary.LittleEndian.Uint64(h[6:14]))
		ser, sq := binary.LittleEndian.Uint32(h[14:18]), binary.LittleEndian.Uint32(h[18:22])
		lacing, err := s.read(int(h[26]))
		if err != nil {
			return Info{}, s.truncated(err, "a page header")
		}
		var n int
		for _, l := range lacing {
			n += int(l)
		}
		switch {
		case pages == 0 && flags&2 == 0:
			return Info{}, refuse(Malformed, "not an Ogg file: its first page does not begin a stream")
		case pages > 0 && (ser != serial || flags&2 != 0):
			return Info{}, refuse(Unsupported, "an Ogg file with more than one stream (a video, or sounds one after another); closer accepts one Opus or Vorbis sound")
		case eos:
			return Info{}, refuse(Malformed, "not an Ogg file: a page follows its last one")
		case pages > 0 && sq != seq+1:
			return Info{}, refuse(Truncated, "the Ogg file is damaged: %d of its pages are missing after page %d", sq-seq-1, seq)
		}
		if pages == 0 {
			serial = ser
			payload, err := s.read(n)
			if err != nil {
				return Info{}, s.truncated(err, "its first page")
			}
			if err := oggCodec(payload, &info, &preSkip); err != nil {
				return Info{}, err
			}
		} else if err := s.skip(int64(n)); err != nil {
			return Info{}, s.truncated(err, "a page")
		}
		if gp != -1 {
			granule = gp
		}
		seq, eos = sq, flags&4 != 0
		pages++
	}
	if !eos {
		return Info{}, refuse(Truncated, "the Ogg file is cut short: its last page is not marked as the end of the stream")
	}
	if granule <= preSkip {
		return Info{}, refuse(Malformed, "the Ogg file holds no sound")
	}
	info.Duration = time.Duration(float64(granule-preSkip) / float64(oggGranuleRate(info)) * float64(time.Second))
	return info, nil
}

// oggGranuleRate is the unit of the granule position: Opus counts at 48 kHz
// whatever the input rate, Vorbis at its sample rate.
func oggGranuleRate(info Info) int {
	if info.Codec == "opus" {
		return 48000
	}
	return info.SampleRate
}

// oggCodec reads the identification header that opens the stream.
func oggCodec(p []byte, info *Info, preSkip *int64) error {
	switch {
	case len(p) >= 19 && string(p[:8]) == "OpusHead":
		if p[8]>>4 != 0 {
			return refuse(Unsupported, "an Ogg Opus file of version %d; closer reads version 0 and 1", p[8])
		}
		info.Codec, info.Channels = "opus", int(p[9])
		*preSkip = int64(binary.LittleEndian.Uint16(p[10:12]))
		info.SampleRate = int(binary.LittleEndian.Uint32(p[12:16]))
		if info.SampleRate == 0 {
			info.SampleRate = 48000
		}
	case len(p) >= 30 && p[0] == 1 && string(p[1:7]) == "vorbis":
		info.Codec, info.Channels = "vorbis", int(p[11])
		info.SampleRate = int(binary.LittleEndian.Uint32(p[12:16]))
		if binary.LittleEndian.Uint32(p[7:11]) != 0 || info.SampleRate == 0 {
			return refuse(Malformed, "not an Ogg Vorbis file: its identification header is invalid")
		}
	case len(p) >= 5 && (string(p[1:5]) == "FLAC" || string(p[:4]) == "fLaC"):
		return refuse(Unsupported, "an Ogg file of FLAC; closer accepts Ogg files of Opus or Vorbis (or FLAC in its own .flac file)")
	case len(p) >= 7 && string(p[1:7]) == "theora":
		return refuse(Unsupported, "an Ogg Theora video; closer accepts videos as MP4 or WebM")
	case len(p) >= 8 && string(p[:8]) == "Speex   ":
		return refuse(Unsupported, "an Ogg Speex file; closer accepts Ogg files of Opus or Vorbis")
	default:
		return refuse(Unsupported, "an Ogg file of a codec closer does not accept; it accepts Opus or Vorbis")
	}
	if info.Channels < 1 {
		return refuse(Malformed, "the Ogg %s file states no channels", info.Codec)
	}
	info.AudioCodec = info.Codec
	return nil
}
