package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"
)

// hstsMaxAge is the Strict-Transport-Security max-age sent when the server
// serves HTTPS itself: two years, without includeSubDomains (closer does
// not own its domain's other hosts).
const hstsMaxAge = 2 * 365 * 24 * time.Hour

// loadKeyPair reads a PEM certificate (chain) and its private key and
// checks that they belong together.
func loadKeyPair(certFile, keyFile string) (*tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return &cert, nil
}

// certReloader holds the certificate the server presents and replaces it
// from the same files on reload (SIGHUP), so a renewed certificate is
// taken up without a restart. A pair that fails to load leaves the
// current certificate in place.
type certReloader struct {
	certFile, keyFile string
	log               *slog.Logger
	cert              atomic.Pointer[tls.Certificate]
}

// newCertReloader loads the pair once; an error here stops the server.
func newCertReloader(certFile, keyFile string, log *slog.Logger) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile, log: log}
	if err := r.reload(); err != nil {
		return nil, err
	}
	return r, nil
}

// reload loads the files again and serves the new pair from the next
// handshake on; on error the current pair stays.
func (r *certReloader) reload() error {
	cert, err := loadKeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("TLS_CERT_FILE %s and TLS_KEY_FILE %s: %w", r.certFile, r.keyFile, err)
	}
	r.cert.Store(cert)
	leaf := cert.Leaf // set by tls.LoadX509KeyPair
	r.log.Info("TLS certificate loaded", "file", r.certFile, "subject", leaf.Subject.String(),
		"dns_names", leaf.DNSNames, "not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
	if now := time.Now(); now.After(leaf.NotAfter) || now.Before(leaf.NotBefore) {
		r.log.Warn("the TLS certificate is not valid now: browsers will refuse it", "file", r.certFile,
			"not_before", leaf.NotBefore.UTC().Format(time.RFC3339), "not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	return nil
}

// getCertificate is tls.Config.GetCertificate.
func (r *certReloader) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return r.cert.Load(), nil
}

// reloadOn reloads the pair on every signal from sig until ctx ends.
func (r *certReloader) reloadOn(ctx context.Context, sig <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-sig:
			if err := r.reload(); err != nil {
				r.log.Error("TLS certificate reload failed; keeping the current certificate", "err", err)
			}
		}
	}
}

// tlsConfig is the server's TLS configuration: TLS 1.2 at least, the
// certificate from the reloader.
func (r *certReloader) tlsConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.getCertificate}
}
