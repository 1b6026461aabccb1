// Package avfile checks sound and video files by their content, for items
// that are played rather than shown: it recognises the container from the
// first bytes (never the file's name), parses the headers that state what
// the file holds and how long it lasts, and refuses, with a reason a
// researcher can act on, whatever does not parse or exceeds the study's
// limits.
//
// Reading is one forward pass over an io.Reader, as a zip entry or an
// upload arrives: headers are read into small bounded buffers and payloads
// are skipped, so memory does not grow with the file, and the work is
// bounded by the bytes read (at most Limits.MaxBytes). The parsers are
// written from the format specifications rather than taken from libraries
// because the Go libraries for these formats either need an io.ReadSeeker
// (MP4 box readers, WAV decoders), decode the audio, or read elements of
// the size a header claims into memory; a probe must do none of these.
//
// What a probe does not check, by choice: Ogg pages' CRCs; the inside of
// the frames (nothing is decoded, so a file whose headers are whole but
// whose coded sound is damaged is accepted and plays with glitches); a
// FLAC file cut inside its last frame (at most one block, a fraction of a
// second); a constant-bitrate MP3 without a Xing header that was cut (it
// is simply shorter); an M4A's mp4a entry is taken for AAC without reading
// its decoder configuration. Fragmented MP4s that state no duration,
// QuickTime, 3GPP, Matroska and sound-only WebM files are refused with
// the reason.
package avfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/closer-lab/closer/internal/media"
)

// Kind says whether a file is a sound or a video.
type Kind int

const (
	// Audio is a file with sound only.
	Audio Kind = iota + 1
	// Video is a file with a picture track (and perhaps sound).
	Video
)

func (k Kind) String() string {
	switch k {
	case Audio:
		return "sound"
	case Video:
		return "video"
	}
	return "file"
}

// The MIME types a probed file is served as: a served item is only ever
// served as what it was parsed as.
const (
	MIMEWAV  = "audio/wav"
	MIMEMP3  = "audio/mpeg"
	MIMEOgg  = "audio/ogg"
	MIMEFLAC = "audio/flac"
	MIMEM4A  = "audio/mp4"
	MIMEMP4  = "video/mp4"
	MIMEWebM = "video/webm"
)

// extOf is each served type's file extension (Info.Ext).
var extOf = map[string]string{MIMEWAV: ".wav", MIMEMP3: ".mp3", MIMEOgg: ".ogg", MIMEFLAC: ".flac", MIMEM4A: ".m4a",
	MIMEMP4: ".mp4", MIMEWebM: ".webm"}

// ExtOf returns the file extension of mime, one of the types a probe
// finds (Info.MIME); ok is false for any other.
func ExtOf(mime string) (ext string, ok bool) {
	ext, ok = extOf[mime]
	return ext, ok
}

// Limits bound one file. A zero field takes its default (DefaultAudio or
// DefaultVideo, by the kind Probe is asked for).
type Limits struct {
	MaxDuration time.Duration // the longest a file may last
	MaxBytes    int64         // the file's size
	MaxWidth    int           // a video's picture, in pixels
	MaxHeight   int
}

// The defaults of Limits' fields.
const (
	DefaultMaxDuration   = 30 * time.Second // sounds and videos alike (issue 29: "default at most 30 s")
	DefaultMaxAudioBytes = 25 << 20         // 30 s of 96 kHz 24-bit stereo WAV is 17 MB
	DefaultMaxVideoBytes = 50 << 20
	DefaultMaxSide       = 1920 // a video's width and height each: full HD, landscape or portrait
)

// DefaultAudio returns the limits of a sound item unless the study sets others.
func DefaultAudio() Limits {
	return Limits{MaxDuration: DefaultMaxDuration, MaxBytes: DefaultMaxAudioBytes, MaxWidth: DefaultMaxSide, MaxHeight: DefaultMaxSide}
}

// DefaultVideo returns the limits of a video item unless the study sets others.
func DefaultVideo() Limits {
	return Limits{MaxDuration: DefaultMaxDuration, MaxBytes: DefaultMaxVideoBytes, MaxWidth: DefaultMaxSide, MaxHeight: DefaultMaxSide}
}

func (l Limits) withDefaults(k Kind) Limits {
	def := DefaultAudio()
	if k == Video {
		def = DefaultVideo()
	}
	if l.MaxDuration <= 0 {
		l.MaxDuration = def.MaxDuration
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = def.MaxBytes
	}
	if l.MaxWidth <= 0 {
		l.MaxWidth = def.MaxWidth
	}
	if l.MaxHeight <= 0 {
		l.MaxHeight = def.MaxHeight
	}
	return l
}

// Info is what a probe found.
type Info struct {
	Kind       Kind
	MIME       string        // one of the MIME constants
	Ext        string        // the extension to store and serve it under: ".wav", ".mp3", ".ogg", ".flac", ".m4a", ".mp4", ".webm"
	Container  string        // "WAV", "MP3", "Ogg", "FLAC", "M4A", "MP4", "WebM"
	Codec      string        // the sound's codec, or the picture's for a video: "pcm", "mp3", "opus", "vorbis", "flac", "aac", "h264", "vp8", "vp9", "av1"
	AudioCodec string        // a video's sound codec ("" when silent); for a sound, Codec
	Duration   time.Duration // how long it lasts
	Width      int           // a video's picture, in pixels (0 for a sound)
	Height     int
	SampleRate int // the sound's samples per second (0 when a video is silent)
	Channels   int
}

// Reason is the kind of a refusal, for callers and tests that act on it;
// the error's text is the reason shown to the researcher.
type Reason int

const (
	// Unrecognised: no accepted container starts the file.
	Unrecognised Reason = iota + 1
	// Malformed: the container is recognised but its headers do not parse.
	Malformed
	// Truncated: the file ends before what its headers declare.
	Truncated
	// Unsupported: a recognised container whose content browsers cannot
	// be relied on to play (a codec or variant closer does not accept).
	Unsupported
	// WrongKind: a video where a sound is wanted, or the reverse.
	WrongKind
	// TooLong: longer than Limits.MaxDuration, or with no stated length.
	TooLong
	// TooLarge: more bytes than Limits.MaxBytes.
	TooLarge
	// TooManyPixels: a video's picture exceeds MaxWidth or MaxHeight.
	TooManyPixels
)

// Error is a refusal: Error() is the user-facing reason.
type Error struct {
	Reason Reason
	msg    string
}

func (e *Error) Error() string { return e.msg }

func refuse(r Reason, format string, args ...any) error {
	return &Error{Reason: r, msg: fmt.Sprintf(format, args...)}
}

// ReasonOf returns the Reason of a probe's error (0 when err is not one).
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return 0
}

// bufSize is the look-ahead of the reader: the largest header read at once
// and an MP3 frame plus the next frame's header.
const bufSize = 64 << 10

// ProbeAudio checks that r holds a sound closer accepts (WAV, MP3, Ogg
// Opus or Vorbis, FLAC, M4A/AAC) within lim. size is the file's length in
// bytes when known (-1 when not, e.g. a stream); a known size is checked
// before anything is read.
func ProbeAudio(r io.Reader, size int64, lim Limits) (Info, error) {
	return probe(r, size, lim, Audio)
}

// ProbeVideo checks that r holds a video closer accepts (MP4 with H.264
// and AAC, WebM with VP8, VP9 or AV1 and Opus or Vorbis) within lim.
func ProbeVideo(r io.Reader, size int64, lim Limits) (Info, error) {
	return probe(r, size, lim, Video)
}

// Probe checks r as either kind, the container deciding which (an MP4
// with a picture track is a video, one without is an M4A sound); a sound
// is bounded by lim's defaults for sounds, a video by those for videos.
func Probe(r io.Reader, size int64, lim Limits) (Info, error) {
	return probe(r, size, lim, 0)
}

func probe(r io.Reader, size int64, lim Limits, want Kind) (info Info, err error) {
	// The parsers index only what they have checked the length of; this
	// turns a mistake into a refusal rather than a crashed upload. (The
	// fuzz targets call check, so that such a mistake fails them.)
	defer func() {
		if p := recover(); p != nil {
			info, err = Info{}, refuse(Malformed, "the file could not be read (%v)", p)
		}
	}()
	return check(r, size, lim, want)
}

// check is probe without the recovery.
func check(r io.Reader, size int64, lim Limits, want Kind) (Info, error) {
	maxBytes := lim.withDefaults(Audio).MaxBytes
	if want == Video || want == 0 {
		maxBytes = max(maxBytes, lim.withDefaults(Video).MaxBytes)
	}
	if want == Video {
		maxBytes = lim.withDefaults(Video).MaxBytes
	}
	if size > maxBytes {
		return Info{}, refuse(TooLarge, "%s", media.TooLarge(size, maxBytes))
	}
	s := &stream{br: bufio.NewReaderSize(r, bufSize), limit: maxBytes, size: size}
	info, err := s.parse(want)
	if err == nil {
		err = s.drain()
	}
	if err != nil {
		return Info{}, err
	}
	if want != 0 && info.Kind != want {
		if info.Kind == Video {
			return Info{}, refuse(WrongKind, "a video (%s with a picture track), not a sound", info.Container)
		}
		return Info{}, refuse(WrongKind, "a sound (%s), not a video: it has no picture track", info.Container)
	}
	l := lim.withDefaults(info.Kind)
	if s.pos > l.MaxBytes {
		return Info{}, refuse(TooLarge, "%s", media.TooLarge(s.pos, l.MaxBytes))
	}
	if info.Duration <= 0 {
		return Info{}, refuse(Malformed, "the %s file does not state how long it lasts", info.Container)
	}
	if info.Duration > l.MaxDuration {
		return Info{}, refuse(TooLong, "lasts %s, the study's limit is %s", Seconds(info.Duration), Seconds(l.MaxDuration))
	}
	if info.Kind == Video {
		if info.Width <= 0 || info.Height <= 0 {
			return Info{}, refuse(Malformed, "the %s file does not state its picture's size", info.Container)
		}
		if info.Width > l.MaxWidth || info.Height > l.MaxHeight {
			return Info{}, refuse(TooManyPixels, "its picture is %d×%d pixels, the study's limit is %d×%d", info.Width, info.Height, l.MaxWidth, l.MaxHeight)
		}
	}
	return info, nil
}

// Seconds formats a duration as the refusals do: "45 s", "2.5 s".
func Seconds(d time.Duration) string {
	s := fmt.Sprintf("%.1f", d.Seconds())
	return strings.TrimSuffix(s, ".0") + " s"
}

// parse sniffs the container from the first bytes and runs its parser.
func (s *stream) parse(want Kind) (Info, error) {
	head, _ := s.br.Peek(16)
	if len(head) == 0 {
		return Info{}, refuse(Unrecognised, "the file is empty")
	}
	if bytes.HasPrefix(head, []byte("ID3")) {
		// An ID3v2 tag may precede an MP3 stream (and, against the
		// specification, a FLAC one): skip it and look again.
		if err := s.skipID3(); err != nil {
			return Info{}, err
		}
		head, _ = s.br.Peek(16)
		if bytes.HasPrefix(head, []byte("fLaC")) {
			return s.flac()
		}
		return s.mp3(true)
	}
	switch {
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WAVE":
		return s.wav()
	case len(head) >= 4 && string(head[:4]) == "RIFF":
		return Info{}, refuse(Unrecognised, "a RIFF file that is not WAVE (perhaps AVI or WebP), not a sound or video closer accepts")
	case bytes.HasPrefix(head, []byte("OggS")):
		return s.ogg()
	case bytes.HasPrefix(head, []byte("fLaC")):
		return s.flac()
	case len(head) >= 8 && string(head[4:8]) == "ftyp":
		return s.mp4()
	case bytes.HasPrefix(head, []byte{0x1A, 0x45, 0xDF, 0xA3}):
		return s.webm()
	case len(head) >= 4 && isMP3Sync(head):
		return s.mp3(false)
	}
	return Info{}, unrecognised(head, want)
}

// unrecognised names what the file seems to be when it is none of the
// accepted containers, so that a misplaced image or document is named.
func unrecognised(head []byte, want Kind) error {
	accepted := "WAV, MP3, Ogg, FLAC, M4A, MP4 or WebM"
	switch want {
	case Audio:
		accepted = "WAV, MP3, Ogg (Opus or Vorbis), FLAC or M4A"
	case Video:
		accepted = "MP4 or WebM"
	}
	noun := "sound or video"
	if want != 0 {
		noun = want.String()
	}
	what := http.DetectContentType(head)
	if i := strings.IndexByte(what, ';'); i >= 0 {
		what = what[:i]
	}
	switch {
	case strings.HasPrefix(what, "image/"), strings.HasPrefix(what, "text/"), what == "application/pdf", what == "application/zip":
		return refuse(Unrecognised, "not a %s file closer accepts (%s): its content is %s", noun, accepted, what)
	}
	return refuse(Unrecognised, "not a %s file closer accepts (%s): its content starts with none of their signatures", noun, accepted)
}
