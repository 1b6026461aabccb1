package avfile

import (
	"bufio"
	"errors"
	"io"

	"github.com/closer-lab/closer/internal/media"
)

// stream is the one forward pass over a file: every read is bounded by the
// look-ahead buffer or by limit, the bytes the file may have.
type stream struct {
	br    *bufio.Reader
	pos   int64 // bytes consumed so far
	limit int64 // bytes the file may have
	size  int64 // the file's length when known, else -1
	what  string
	depth int // the MP4 boxes being read, nested
}

// errEOF marks a read that found the end of the file where more was
// declared; the parsers turn it into a Truncated refusal naming the format.
var errEOF = errors.New("unexpected end of file")

// need checks that n more bytes may be read.
func (s *stream) need(n int64) error {
	if n < 0 || s.pos+n > s.limit || s.pos+n < s.pos {
		return refuse(TooLarge, "%s", media.TooLarge(min(max(s.pos+n, s.pos), 1<<62), s.limit))
	}
	return nil
}

// peek returns the next n bytes (n ≤ bufSize) without consuming them;
// fewer at the end of the file.
func (s *stream) peek(n int) []byte {
	b, _ := s.br.Peek(n)
	return b
}

// read consumes and returns the next n bytes (n ≤ bufSize); the slice is
// valid until the next call.
func (s *stream) read(n int) ([]byte, error) {
	if n > bufSize {
		return nil, refuse(Malformed, "a header of the %s file is too large to be one (%s)", s.what, media.HumanBytes(int64(n)))
	}
	if err := s.need(int64(n)); err != nil {
		return nil, err
	}
	b, err := s.br.Peek(n)
	if len(b) < n {
		if err == nil || err == io.EOF || err == bufio.ErrBufferFull {
			return nil, errEOF
		}
		return nil, err
	}
	_, _ = s.br.Discard(n)
	s.pos += int64(n)
	return b, nil
}

// skip consumes n bytes without keeping them.
func (s *stream) skip(n int64) error {
	if n >= 0 && s.size >= 0 && s.pos+n > s.size {
		return errEOF
	}
	if err := s.need(n); err != nil {
		return err
	}
	for n > 0 {
		step := int(min(n, 1<<30))
		k, err := s.br.Discard(step)
		s.pos += int64(k)
		n -= int64(k)
		if err != nil {
			if err == io.EOF {
				return errEOF
			}
			return err
		}
	}
	return nil
}

// atEOF reports whether the file has no more bytes.
func (s *stream) atEOF() bool {
	_, err := s.br.Peek(1)
	return err != nil
}

// truncated turns errEOF into the format's Truncated refusal and passes
// every other error on.
func (s *stream) truncated(err error, what string) error {
	if errors.Is(err, errEOF) {
		return refuse(Truncated, "the %s file is cut short: it ends inside %s", s.what, what)
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return refuse(Malformed, "the %s file cannot be read: %v", s.what, err)
}

// skipID3 skips an ID3v2 tag (the header's syncsafe size, plus a footer
// when flagged).
func (s *stream) skipID3() error {
	s.what = "MP3"
	h, err := s.read(10)
	if err != nil {
		return s.truncated(err, "its ID3 tag")
	}
	if h[3] == 0xFF || h[4] == 0xFF || (h[6]|h[7]|h[8]|h[9])&0x80 != 0 {
		return refuse(Malformed, "not an MP3 file: its ID3 tag's header is invalid")
	}
	n := int64(h[6])<<21 | int64(h[7])<<14 | int64(h[8])<<7 | int64(h[9])
	if h[5]&0x10 != 0 {
		n += 10
	}
	if err := s.skip(n); err != nil {
		return s.truncated(err, "its ID3 tag")
	}
	return nil
}

// drain reads the rest of the file, so that a file longer than the limit
// is refused even when its size was not known beforehand.
func (s *stream) drain() error {
	for {
		k, err := s.br.Discard(bufSize)
		s.pos += int64(k)
		if s.pos > s.limit {
			return refuse(TooLarge, "%s", media.TooLarge(s.pos, s.limit))
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return refuse(Malformed, "the %s file cannot be read: %v", s.what, err)
		}
	}
}
