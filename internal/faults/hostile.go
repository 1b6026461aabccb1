package faults

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Hostile is the hostile-client harness: raw TCP clients that do what a
// browser never does (issue 24): send a body's first byte and stall, ask
// for a large response and never read it, send a form far over any limit,
// or a multipart body of thousands of fields. It is used by the tests of
// internal/web against an httptest server (TestHostileClients*, small
// limits, seconds) and by TestHostile here against the real binary
// (go test ./internal/faults -hostile -v; docs/reliability.md).
type Hostile struct {
	// Addr is the server's host:port.
	Addr string
	// Header is sent with every request (a session cookie, say).
	Header map[string]string
}

// dial connects with a small receive buffer, so that an unread response
// fills the server's socket rather than the client's.
func (h Hostile) dial() (net.Conn, error) {
	d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return errors.Join(err, serr)
	}}
	return d.Dial("tcp", h.Addr)
}

// head writes a request's line and headers.
func (h Hostile) head(w io.Writer, method, path string, extra map[string]string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, path, h.Addr)
	for k, v := range h.Header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	for k, v := range extra {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// StalledBody sends a request that declares a body of declared bytes
// (Content-Type contentType) and sends its first byte only; the connection
// stays open, silent, until closed.
func (h Hostile) StalledBody(method, path, contentType string, declared int) (net.Conn, error) {
	c, err := h.dial()
	if err != nil {
		return nil, err
	}
	err = h.head(c, method, path, map[string]string{"Content-Type": contentType, "Content-Length": fmt.Sprint(declared)})
	if err == nil {
		_, err = c.Write([]byte("{"))
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// UnreadResponse asks for path and never reads the answer.
func (h Hostile) UnreadResponse(path string) (net.Conn, error) {
	c, err := h.dial()
	if err != nil {
		return nil, err
	}
	if err := h.head(c, "GET", path, nil); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Swarm is a set of open hostile connections.
type Swarm struct{ Conns []net.Conn }

// Open opens n connections with open, stopping at the first error (the
// connections opened so far stay in the swarm, to be closed).
func Open(n int, open func() (net.Conn, error)) (*Swarm, error) {
	s := &Swarm{}
	for range n {
		c, err := open()
		if err != nil {
			return s, err
		}
		s.Conns = append(s.Conns, c)
	}
	return s, nil
}

// Close closes every connection.
func (s *Swarm) Close() {
	for _, c := range s.Conns {
		c.Close()
	}
}

// Drain reads what the server sends on c until it closes the connection
// or limit passes, and says how many bytes came and whether the server
// closed it (false: still open at the limit).
func Drain(c net.Conn, limit time.Duration) (n int64, closed bool) {
	if err := c.SetReadDeadline(time.Now().Add(limit)); err != nil {
		return 0, false
	}
	n, err := io.Copy(io.Discard, c)
	var ne net.Error
	return n, !(errors.As(err, &ne) && ne.Timeout())
}

// Answer is the status of a response read off a raw connection and how
// many body bytes the client had sent when it came.
type Answer struct {
	Status int
	Sent   int64
	Body   string
}

// Send sends a request with a body of size bytes made of repeating fill
// (Content-Length given), writing the body while it waits, at most limit,
// for the answer: a server that refuses a body by its declared length
// answers before it has been sent.
func (h Hostile) Send(method, path, contentType string, size int64, fill []byte, limit time.Duration) (Answer, error) {
	c, err := h.dial()
	if err != nil {
		return Answer{}, err
	}
	defer c.Close()
	if err := h.head(c, method, path, map[string]string{"Content-Type": contentType, "Content-Length": fmt.Sprint(size)}); err != nil {
		return Answer{}, err
	}
	var (
		mu   sync.Mutex
		sent int64
	)
	go func() {
		chunk := bytes.Repeat(fill, max(1, 32<<10/len(fill)))
		for left := size; left > 0; {
			n, err := c.Write(chunk[:min(int64(len(chunk)), left)])
			mu.Lock()
			sent += int64(n)
			mu.Unlock()
			if err != nil {
				return
			}
			left -= int64(n)
		}
	}()
	if err := c.SetReadDeadline(time.Now().Add(limit)); err != nil {
		return Answer{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	mu.Lock()
	a := Answer{Sent: sent}
	mu.Unlock()
	if err != nil {
		return a, fmt.Errorf("%s %s: no answer within %s: %w", method, path, limit, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	a.Status, a.Body = res.StatusCode, string(body)
	return a, nil
}

// ManyFields is a multipart/form-data body of n distinct text fields of
// size bytes each, and its Content-Type.
func ManyFields(n, size int) ([]byte, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	v := strings.Repeat("x", size)
	for i := range n {
		_ = mw.WriteField(fmt.Sprintf("f%05d", i), v) // into a bytes.Buffer: cannot fail
	}
	_ = mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}

// Post sends body whole with Content-Length and reads the answer (at most
// limit).
func (h Hostile) Post(path, contentType string, body []byte, limit time.Duration) (Answer, error) {
	c, err := h.dial()
	if err != nil {
		return Answer{}, err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(limit)); err != nil {
		return Answer{}, fmt.Errorf("POST %s: %w", path, err)
	}
	if err := h.head(c, "POST", path, map[string]string{"Content-Type": contentType, "Content-Length": fmt.Sprint(len(body))}); err != nil {
		return Answer{}, err
	}
	// The server may answer (and close) before it reads the whole body; the
	// answer, read below, is what counts, not how much of body went out.
	go func() { _, _ = c.Write(body) }()
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return Answer{}, fmt.Errorf("POST %s: %w", path, err)
	}
	defer res.Body.Close()
	rb, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	return Answer{Status: res.StatusCode, Body: string(rb), Sent: int64(len(body))}, nil
}

// Trickle sends a request declaring a body of size bytes and sends one
// byte every every, until the server closes the connection or limit
// passes; it says whether the server cut it.
func (h Hostile) Trickle(method, path, contentType string, size int, every, limit time.Duration) (cut bool, err error) {
	c, err := h.dial()
	if err != nil {
		return false, err
	}
	defer c.Close()
	if err := h.head(c, method, path, map[string]string{"Content-Type": contentType, "Content-Length": fmt.Sprint(size)}); err != nil {
		return false, err
	}
	closed := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, c); close(closed) }() // ends when the server closes c
	end := time.After(limit)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-closed:
			return true, nil
		case <-end:
			return false, nil
		case <-tick.C:
			if _, err := c.Write([]byte("x")); err != nil {
				return true, nil
			}
		}
	}
}
