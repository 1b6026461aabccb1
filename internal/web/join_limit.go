package web

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/closer-lab/closer/internal/cache"
	"github.com/closer-lab/closer/internal/i18n"
)

// maxJoinLimiters bounds the client addresses whose join limiters are
// kept (about 100 bytes each); past it the least recently seen address
// starts afresh with a full burst.
const maxJoinLimiters = 50_000

// joinLimiter limits the participants one client address creates
// (Config.JoinRate a second, Config.JoinBurst at once): one client made
// 464 a second. Addresses are the login throttle's (throttleAddress: an
// IPv6 /64 counts as one). The zero value is ready: it reads the limits
// from the server's Config on first use.
type joinLimiter struct {
	once   sync.Once
	limit  rate.Limit
	burst  int
	byAddr *cache.LRU[string, *rate.Limiter]
}

// allow takes a join for address at now, or says how long until one is
// free. Limiters are created on first use and kept in an LRU cache.
func (l *joinLimiter) allow(cfg Config, address string, now time.Time) (bool, time.Duration) {
	l.once.Do(func() {
		l.limit, l.burst = rate.Limit(cfg.JoinRate), cfg.JoinBurst
		if l.burst < 1 {
			l.burst = max(1, int(math.Ceil(cfg.JoinRate)))
		}
		l.byAddr = cache.New[string, *rate.Limiter](maxJoinLimiters)
	})
	if l.limit <= 0 {
		return true, 0
	}
	lim, _ := l.byAddr.GetOrAdd(address, func() *rate.Limiter { return rate.NewLimiter(l.limit, l.burst) })
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// limitJoins refuses a join (a participant created or resumed) from a
// client address past its rate: 429 with Retry-After in whole seconds.
func (s *Server) limitJoins(w http.ResponseWriter, r *http.Request) error {
	address := throttleAddress(s.clientAddr(r))
	ok, wait := s.joins.allow(s.cfg, address, s.cfg.Now())
	if ok {
		return nil
	}
	secs := int64(math.Ceil(wait.Seconds()))
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	s.log.WarnContext(r.Context(), "join refused: too many from one address", "address", address, "retry_after_s", secs)
	return s.refuse(http.StatusTooManyRequests, i18n.TooManyJoins, int(secs))
}
