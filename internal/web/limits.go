package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/closer-lab/closer/internal/media"
)

// Request limits and deadlines (issue 24). A slow or stalled client must
// cost a goroutine and a socket, never a database slot (shed.go) or a pool
// connection, and no body is read without a bound. Every route belongs to
// one class (limitsFor); docs/security.md ("Request limits and deadlines")
// has the table.
//
//   - small: the body (at most the route's limit) is read whole into
//     memory before the request takes its slot (refuseBadText), within
//     BodyReadTimeout of the request's start; url-encoded forms are parsed
//     from that copy. Anonymous routes are all small.
//   - admin: behind requireAdmin, whose check needs the database: the body
//     is read only after the session is, and the slot is let go while it is
//     read (readAdminBody).
//   - upload: multipart uploads spooled to a temporary file by their
//     handlers (readMultipart), with the slot let go while the body
//     arrives; the body must keep arriving at TransferMinBytes per
//     TransferWindow.
//
// Responses: the write deadline is the route's time to its first byte plus
// TransferWindow, and moves on by one TransferWindow each time
// TransferMinBytes have been written, so a client that reads gets a long
// export and one that stops reading lets the goroutine go. Except for the
// streams that read the database as they write (exports), the slot is let
// go at the response's first byte: a client that does not read holds no
// slot (an unread /img).

// Defaults of the deadline settings in Config.
const (
	defaultBodyReadTimeout  = 10 * time.Second
	defaultTransferWindow   = 30 * time.Second
	defaultTransferMinBytes = 64 << 10
	// longTimeout is the time to first byte of the routes that may work
	// long before they answer (uploads, imports, kernel.csv).
	longTimeout = 10 * time.Minute
)

// Body limits of the route classes (bytes).
const (
	// maxSmallBody bounds the forms of annotators and of every route not
	// named below (login, start, answer, admin buttons).
	maxSmallBody = 16 << 10
	// maxStudyForm bounds the study form: its three texts of up to 100,000
	// bytes each (collect.CreateStudy) can triple when URL-encoded.
	maxStudyForm = 1 << 20
)

// bodyKind says when and how a route's body is read.
type bodyKind int

const (
	bodySmall  bodyKind = iota // whole, before the slot
	bodyAdmin                  // whole, after authentication, off the slot
	bodyUpload                 // streamed by the handler, off the slot, at a minimum rate
)

// routeLimits are a route's body limit and deadlines.
type routeLimits struct {
	kind bodyKind
	body int64 // the largest body accepted (bytes)
	// firstByte is how long the handler may work before it writes.
	firstByte time.Duration
	// stream: the response is written while the database is read (an
	// export), so the slot is kept until the handler returns.
	stream bool
}

// streamSuffixes name the exports streamed from the database: they keep
// their slot while they write. Any other handler that writes while it
// reads the database (an image served in pieces, say) must hold no pool
// connection while it waits on the client, or be listed here.
var streamSuffixes = []string{"/audit.csv", "/triplets.csv", "/bundle.zip", "/embedding.csv", "/participants.csv", "/kernel-pca.csv", "/kernel.csv"}

// limitsFor classifies a request by method and path, before routing (the
// middleware that needs it runs before chi matches a route). Paths that
// match no route get the small defaults and a 404.
func (s *Server) limitsFor(method, path string) routeLimits {
	lim := routeLimits{kind: bodySmall, body: maxSmallBody, firstByte: s.cfg.Timeout}
	seg := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case seg[0] == "api":
		lim.body = maxJSONBody
	case seg[0] == "admin" && path != "/admin/login" && path != "/admin/logout":
		lim.kind = bodyAdmin
	}
	if method == http.MethodGet || method == http.MethodHead {
		for _, suf := range streamSuffixes {
			if strings.HasSuffix(path, suf) {
				lim.stream = true
			}
		}
		if strings.HasSuffix(path, "/kernel.csv") {
			lim.firstByte = longTimeout
		}
		return lim
	}
	if lim.kind != bodyAdmin {
		return lim
	}
	switch {
	case len(seg) == 4 && seg[1] == "studies" && (seg[3] == "items" || seg[3] == "gold"),
		len(seg) == 3 && seg[1] == "import" && (seg[2] == "bundle" || seg[2] == "triplets"):
		lim.kind, lim.body, lim.firstByte = bodyUpload, s.cfg.MaxUploadBytes, longTimeout
	case len(seg) == 4 && seg[1] == "studies" && seg[3] == "texts":
		// Text items (admin_texts.go): parsed as they arrive.
		lim.kind, lim.body, lim.firstByte = bodyUpload, maxTextRequestBytes, longTimeout
	case len(seg) >= 2 && len(seg) <= 3 && seg[1] == "studies": // create (POST /admin/studies) and edit
		lim.body = maxStudyForm
	}
	return lim
}

// admission is a request's state between the middleware: its limits, its
// connection's deadlines and whether it holds a slot.
type admission struct {
	limits routeLimits
	rc     *http.ResponseController
	slots  chan struct{}
	held   atomic.Bool
}

type admissionKey struct{}

// admissionFrom returns the request's admission (nil outside deadlines).
func admissionFrom(ctx context.Context) *admission {
	a, _ := ctx.Value(admissionKey{}).(*admission)
	return a
}

// release gives the slot back if the request holds one; it reports whether
// it did.
func (a *admission) release() bool {
	if a != nil && a.held.CompareAndSwap(true, false) {
		<-a.slots
		return true
	}
	return false
}

// deadlines classifies the request, sets its connection's read and write
// deadlines and makes them move with the transfer's progress.
func (s *Server) deadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := &admission{limits: s.limitsFor(r.Method, r.URL.Path), rc: http.NewResponseController(w), slots: s.slots}
		now := time.Now()
		// Errors are http.ErrNotSupported from writers that have no
		// connection (tests' recorders); there is nothing to bound then.
		_ = a.rc.SetWriteDeadline(now.Add(a.limits.firstByte + s.cfg.TransferWindow))
		if r.Body != nil && r.Body != http.NoBody {
			b := &deadlineBody{ReadCloser: r.Body, rc: a.rc}
			if a.limits.kind == bodyUpload {
				b.window, b.min = s.cfg.TransferWindow, int64(s.cfg.TransferMinBytes)
				_ = a.rc.SetReadDeadline(now.Add(b.window))
			} else {
				_ = a.rc.SetReadDeadline(now.Add(s.cfg.BodyReadTimeout))
			}
			r.Body = b
		} else {
			// Nothing to read: a deadline left on the connection would end
			// net/http's background read, which cancels the request's
			// context, in the middle of a long export.
			_ = a.rc.SetReadDeadline(time.Time{})
		}
		dw := &deadlineWriter{ResponseWriter: w, a: a, window: s.cfg.TransferWindow, chunk: s.cfg.TransferMinBytes}
		next.ServeHTTP(dw, r.WithContext(context.WithValue(r.Context(), admissionKey{}, a)))
		dw.resume() // what net/http writes after the handler (the last chunk) gets the client's window
	})
}

// deadlineBody is a request body whose connection's read deadline moves
// on by window each time min bytes have arrived (min zero: it stays), and
// is lifted once the body is in (see deadlines on the background read).
type deadlineBody struct {
	io.ReadCloser
	rc     *http.ResponseController
	window time.Duration
	min    int64
	got    int64
	done   bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.min > 0 {
		if b.got += int64(n); b.got >= b.min {
			b.got = 0
			_ = b.rc.SetReadDeadline(time.Now().Add(b.window))
		}
	}
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// deadlineWriter moves the connection's write deadline on by window for
// each chunk bytes the client takes, and lets the request's slot go at the
// first byte unless the route streams from the database. The time the
// handler itself spends between two writes (reading the next piece from
// the database, say) is not the client's: the deadline moves on by it, so
// a slow server never cuts off a client that reads at the pace asked.
type deadlineWriter struct {
	http.ResponseWriter
	a        *admission
	window   time.Duration
	chunk    int
	sent     int
	started  bool
	deadline time.Time // the write deadline last set
	returned time.Time // when the last Write returned
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	if !d.started && !d.a.limits.stream {
		d.a.release()
	}
	d.resume()
	defer d.pause()
	written := 0
	for len(p) > 0 {
		if !d.started || d.sent >= d.chunk {
			d.started, d.sent = true, 0
			d.setDeadline(time.Now().Add(d.window))
		}
		k := min(len(p), d.chunk-d.sent)
		n, err := d.ResponseWriter.Write(p[:k])
		written += n
		d.sent += n
		if err != nil {
			return written, err
		}
		p = p[k:]
	}
	return written, nil
}

// pause notes that the handler stops writing; resume moves the deadline
// on by the time since (the handler's, not the client's). The last
// resume comes after the handler returned, before net/http ends the
// response.
func (d *deadlineWriter) pause() { d.returned = time.Now() }

func (d *deadlineWriter) resume() {
	if d.started && !d.returned.IsZero() {
		d.setDeadline(d.deadline.Add(time.Since(d.returned)))
		d.returned = time.Time{}
	}
}

func (d *deadlineWriter) setDeadline(t time.Time) {
	d.deadline = t
	_ = d.a.rc.SetWriteDeadline(t)
}

// Flush sends what is buffered (the exports flush as they go).
func (d *deadlineWriter) Flush() {
	d.resume()
	defer d.pause()
	_ = d.a.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// readBody reads the request body whole, at most limit bytes, and puts
// the copy in its place. A body over the limit is refused with 413 as soon
// as its Content-Length says so, unread; one that does not arrive in time
// with 408 (its connection is closed).
func readBody(w http.ResponseWriter, r *http.Request, limit int64) error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	if r.ContentLength > limit {
		// Closing keeps net/http from reading up to 256 KiB of the body
		// to reuse the connection before it sends the answer.
		w.Header().Set("Connection", "close")
		return tooLarge(limit)
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return bodyError(err, limit)
	}
	r.Body = io.NopCloser(strings.NewReader(string(b)))
	return nil
}

// tooLarge refuses a body over a route's limit.
func tooLarge(limit int64) error {
	return &httpError{status: http.StatusRequestEntityTooLarge,
		msg: fmt.Sprintf("the request body is larger than %s, the limit of this address", media.HumanBytes(limit))}
}

// errSlowBody answers a body that did not arrive in time.
var errSlowBody = &httpError{status: http.StatusRequestTimeout, msg: "the request body did not arrive in time"}

// bodyError maps an error reading a body to its answer.
func bodyError(err error, limit int64) error {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return tooLarge(limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return errSlowBody
	}
	return badRequest("the request body is unreadable")
}

// acquire takes a slot for the request, waiting at most QueueWait.
func (s *Server) acquire(ctx context.Context, a *admission) error {
	select {
	case s.slots <- struct{}{}:
	default:
		wait := time.NewTimer(s.cfg.QueueWait)
		defer wait.Stop()
		select {
		case s.slots <- struct{}{}:
		case <-wait.C:
			return errBusy
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if a != nil {
		a.held.Store(true)
	}
	return nil
}

// offSlot runs read, which waits on the client's network, without the
// request's slot, and takes one again afterwards (503 if none comes in
// time) so the handler's database work that follows is admitted as
// before: without one it returns errBusy (or the context's error).
func (s *Server) offSlot(r *http.Request, read func() error) error {
	a := admissionFrom(r.Context())
	had := a.release()
	err := read()
	if had {
		if aerr := s.acquire(r.Context(), a); aerr != nil {
			return aerr
		}
	}
	return err
}

// SendBuffer is the kernel send buffer of every connection Listen accepts
// (Linux doubles it). The kernel wakes a blocked writer only once about
// half its buffer is free, so a write deadline that moves with progress
// asks a client for max(TransferMinBytes, about SendBuffer) per
// TransferWindow; autotuned buffers grow to 4 MiB and more (on loopback),
// which would both ask a slow honest reader for 2 MiB per window and let
// each unread response park 4 MiB of kernel memory. 256 KiB still carries
// 5 MB/s at a 50 ms round trip.
const SendBuffer = 256 << 10

// Listen listens on addr (TCP) with the connections' send buffer set to
// SendBuffer; cmd/web serves on it and the tests' servers do too.
func Listen(ctx context.Context, addr string) (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, SendBuffer)
		})
		return errors.Join(err, serr)
	}}
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}
