package web

import (
	"net/http"
	"strings"
	"time"

	"github.com/closer-lab/closer/internal/collect"
)

// Defaults of the load-shedding settings in Config.
const (
	defaultMaxDBRequests  = 64 // four times the server's default pool of 16
	defaultQueueWait      = time.Second
	defaultAcquireTimeout = 2 * time.Second
	// healthzAcquireTimeout bounds /healthz's wait for a connection.
	healthzAcquireTimeout = 500 * time.Millisecond
)

// errBusy answers a request that found no free slot in time.
var errBusy = &httpError{status: http.StatusServiceUnavailable,
	msg: "the server is busy; please try again in a few seconds"}

// withShedDefaults fills the load-shedding and deadline settings left at
// zero.
func withShedDefaults(cfg Config) Config {
	if cfg.BodyReadTimeout <= 0 {
		cfg.BodyReadTimeout = defaultBodyReadTimeout
	}
	if cfg.TransferWindow <= 0 {
		cfg.TransferWindow = defaultTransferWindow
	}
	if cfg.TransferMinBytes <= 0 {
		cfg.TransferMinBytes = defaultTransferMinBytes
	}
	if cfg.MaxDBRequests <= 0 {
		cfg.MaxDBRequests = defaultMaxDBRequests
	}
	if cfg.QueueWait <= 0 {
		cfg.QueueWait = defaultQueueWait
	}
	if cfg.AcquireTimeout <= 0 {
		cfg.AcquireTimeout = defaultAcquireTimeout
	}
	return cfg
}

// shed sheds load instead of queueing it: at most MaxDBRequests requests
// that use the database run at once, a request waits at most QueueWait for
// one of those slots, and inside a slot at most AcquireTimeout for a pool
// connection (collect.WithAcquireTimeout). Either wait ending answers 503
// with Retry-After at once, rather than after the route's whole timeout
// spent in a queue, so a database that is slow or down does not pile up
// requests and a client learns quickly to come back later.
//
// The static files never touch the database and pass untouched; /healthz
// takes no slot (it must answer while the app is busy) but waits at most
// half a second for a connection, so a pool with no free connection reads as unhealthy in time.
// Item images (/img/) do query the database and take a slot.
//
// The slot is taken once the request's body is in (refuseBadText reads
// it), never while waiting on the client: uploads and admin forms give it
// back while their bodies arrive (offSlot), and every response but the
// exports gives it back at its first byte (deadlineWriter, limits.go).
func (s *Server) shed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/static/") {
			next.ServeHTTP(w, r)
			return
		}
		if r.URL.Path == "/healthz" {
			// A monitor's probe usually gives up after a second or two; say
			// 503 before it does.
			r = r.WithContext(collect.WithAcquireTimeout(r.Context(), min(s.cfg.AcquireTimeout, healthzAcquireTimeout)))
			next.ServeHTTP(w, r)
			return
		}
		r = r.WithContext(collect.WithAcquireTimeout(r.Context(), s.cfg.AcquireTimeout))
		a := admissionFrom(r.Context())
		if err := s.acquire(r.Context(), a); err != nil {
			if err == errBusy {
				s.writeError(w, r, err)
			}
			return // else the client went away while waiting
		}
		if a == nil {
			defer func() { <-s.slots }()
		} else {
			defer a.release()
		}
		next.ServeHTTP(w, r)
	})
}
