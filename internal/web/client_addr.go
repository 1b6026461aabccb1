package web

import (
	"net/http"
	"net/netip"
	"strings"
)

// clientAddr returns the address a request came from: the connection's
// peer, unless the peer is a trusted proxy (Config.TrustedProxies), in
// which case X-Forwarded-For is read from the right and the first address
// that is not a trusted proxy is the client. Without trusted proxies the
// header is ignored, so a client cannot choose its own address. The zero
// Addr means the peer's address could not be read.
func (s *Server) clientAddr(r *http.Request) netip.Addr {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	var addr netip.Addr
	if err == nil {
		addr = peer.Addr().Unmap()
	} else if a, err := netip.ParseAddr(r.RemoteAddr); err == nil {
		addr = a.Unmap()
	}
	if !addr.IsValid() || !s.trustedProxy(addr) {
		return addr
	}
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		parts := strings.Split(hops[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			hop, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				// A trusted proxy appends valid addresses: what is left of
				// garbage is the client's word and not believed.
				return addr
			}
			addr = hop.Unmap()
			if !s.trustedProxy(addr) {
				return addr
			}
		}
	}
	return addr
}

func (s *Server) trustedProxy(a netip.Addr) bool {
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// throttleAddress is the key under which failed logins from a are counted:
// an IPv4 address itself, an IPv6 address's /64 (one subscriber usually
// holds a whole /64).
func throttleAddress(a netip.Addr) string {
	if !a.IsValid() {
		return "unknown"
	}
	if a.Is6() {
		p, _ := a.WithZone("").Prefix(64)
		return p.String()
	}
	return a.String()
}
