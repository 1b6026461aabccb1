package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/closer-lab/closer/internal/pgtest"
)

// selfSigned makes a certificate for localhost and 127.0.0.1 with the given
// serial number and returns its PEM certificate, PEM key and parsed form.
func selfSigned(t *testing.T, serial int64) (certPEM, keyPEM []byte, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "closer test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err = x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), cert
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	// Write then rename, as a certificate renewal tool does, so the server
	// never reads half a file.
	tmp := path + ".new"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestConfigTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert1, key1, _ := selfSigned(t, 1)
	_, key2, _ := selfSigned(t, 2)
	certFile, keyFile, otherKey, junk := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "other.pem"), filepath.Join(dir, "junk.pem")
	writeFile(t, certFile, cert1)
	writeFile(t, keyFile, key1)
	writeFile(t, otherKey, key2)
	writeFile(t, junk, []byte("not a certificate\n"))
	db := "postgres://u@localhost:5432/db"

	c, err := loadConfig(env(map[string]string{"DATABASE_URL": db, "TLS_CERT_FILE": certFile, "TLS_KEY_FILE": keyFile}))
	if err != nil {
		t.Fatal(err)
	}
	if !c.servesTLS() || c.BaseURL != "https://localhost:8080" {
		t.Fatalf("with TLS: serves TLS %v, BASE_URL %q; want true and https://localhost:8080", c.servesTLS(), c.BaseURL)
	}
	c, err = loadConfig(env(map[string]string{"DATABASE_URL": db, "TLS_CERT_FILE": certFile, "TLS_KEY_FILE": keyFile,
		"ADDR": ":443", "BASE_URL": "https://closer.example.org"}))
	if err != nil || c.BaseURL != "https://closer.example.org" {
		t.Fatalf("explicit https BASE_URL: %q, %v", c.BaseURL, err)
	}
	if c, err := loadConfig(env(map[string]string{"DATABASE_URL": db})); err != nil || c.servesTLS() {
		t.Fatalf("without TLS: serves TLS %v, %v", c.servesTLS(), err)
	}

	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"cert without key", map[string]string{"TLS_CERT_FILE": certFile}, []string{"set both TLS_CERT_FILE and TLS_KEY_FILE"}},
		{"key without cert", map[string]string{"TLS_KEY_FILE": keyFile}, []string{"set both TLS_CERT_FILE and TLS_KEY_FILE"}},
		{"missing file", map[string]string{"TLS_CERT_FILE": filepath.Join(dir, "nope.pem"), "TLS_KEY_FILE": keyFile}, []string{"TLS_CERT_FILE", "nope.pem", "no such file"}},
		{"unreadable key", map[string]string{"TLS_CERT_FILE": certFile, "TLS_KEY_FILE": dir}, []string{"TLS_KEY_FILE", "is a directory"}},
		{"not PEM", map[string]string{"TLS_CERT_FILE": junk, "TLS_KEY_FILE": keyFile}, []string{"TLS_CERT_FILE", "failed to find any PEM data"}},
		{"key of another certificate", map[string]string{"TLS_CERT_FILE": certFile, "TLS_KEY_FILE": otherKey}, []string{"TLS_KEY_FILE", "does not match"}},
		{"http BASE_URL", map[string]string{"TLS_CERT_FILE": certFile, "TLS_KEY_FILE": keyFile, "BASE_URL": "http://closer.example.org"}, []string{"BASE_URL", "must be https://"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := map[string]string{"LOG_FORMAT": "xml"} // reported with every other problem
			for k, v := range tc.env {
				e[k] = v
			}
			_, err := loadConfig(env(e))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, want := range append(tc.want, "DATABASE_URL is not set", "LOG_FORMAT") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not mention %q:\n%v", want, err)
				}
			}
		})
	}
}

// servedCert returns the serial number of the certificate the server
// presents.
func servedCert(t *testing.T, addr string) *big.Int {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber
}

// The server speaks HTTPS with the configured pair (TLS 1.2 at least),
// sends HSTS on every response, and on SIGHUP serves a renewed pair, or
// keeps the current one when the new files do not load.
func TestServeHTTPSReloadsOnSIGHUP(t *testing.T) {
	t.Parallel()
	// Catch SIGHUP here too, so that if serve did not, the test fails
	// (waiting for the new certificate) instead of the process dying.
	guard := make(chan os.Signal, 1)
	signal.Notify(guard, syscall.SIGHUP)
	defer signal.Stop(guard)

	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	cert1, key1, x1 := selfSigned(t, 1)
	writeFile(t, certFile, cert1)
	writeFile(t, keyFile, key1)
	addr := freeAddr(t)
	envm := map[string]string{"DATABASE_URL": pgtest.EmptyDB(t), "ADDR": addr, "TLS_CERT_FILE": certFile, "TLS_KEY_FILE": keyFile}

	ctx, cancel := context.WithCancel(context.Background())
	var out, logs syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, env(envm), &out, &logs) }()
	stop := func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}
	defer func() {
		if ctx.Err() == nil {
			stop()
		}
	}()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for !ok() {
			select {
			case err := <-done:
				cancel()
				t.Fatalf("server stopped: %v\n%s\n%s", err, out.String(), logs.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not after a minute\nstdout:\n%s\nlog:\n%s", what, out.String(), logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("start", func() bool { return strings.Contains(out.String(), "admin login:") })
	base := "https://" + addr
	if !strings.Contains(out.String(), "closer is serving on "+base) {
		t.Fatalf("start-up output does not name %s:\n%s", base, out.String())
	}

	// A client that trusts only the first certificate.
	roots := x509.NewCertPool()
	roots.AddCert(x1)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}}
	for _, path := range []string{"/healthz", "/s/demo", "/no-such-page"} {
		res, err := client.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.TLS == nil || res.TLS.Version < tls.VersionTLS12 || res.ProtoMajor != 2 {
			t.Fatalf("%s: %s, not HTTP/2 over TLS 1.2+: %+v", path, res.Proto, res.TLS)
		}
		if got := res.Header.Get("Strict-Transport-Security"); got != "max-age=63072000" {
			t.Errorf("%s (%d): Strict-Transport-Security %q, want max-age=63072000", path, res.StatusCode, got)
		}
	}
	if conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}); err == nil {
		conn.Close()
		t.Fatal("a TLS 1.1 handshake succeeded")
	}

	// A renewed pair, then SIGHUP: served from the next handshake on.
	cert2, key2, _ := selfSigned(t, 2)
	writeFile(t, certFile, cert2)
	writeFile(t, keyFile, key2)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor("the renewed certificate served", func() bool { return servedCert(t, addr).Int64() == 2 })

	// A broken pair, then SIGHUP: logged, and the current pair stays.
	writeFile(t, certFile, []byte("-----BEGIN CERTIFICATE-----\ntruncated"))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor("the failed reload logged", func() bool {
		return strings.Contains(logs.String(), "TLS certificate reload failed; keeping the current certificate")
	})
	if s := servedCert(t, addr).Int64(); s != 2 {
		t.Fatalf("after a failed reload the server presents certificate %d, want 2 (kept)", s)
	}
	// A key that does not match the certificate is refused the same way.
	_, key3, _ := selfSigned(t, 3)
	writeFile(t, certFile, cert2)
	writeFile(t, keyFile, key3)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor("the second failed reload logged", func() bool {
		return strings.Count(logs.String(), "TLS certificate reload failed") == 2
	})
	if s := servedCert(t, addr).Int64(); s != 2 {
		t.Fatalf("after a mismatched key the server presents certificate %d, want 2 (kept)", s)
	}
	if n := strings.Count(logs.String(), "TLS certificate loaded"); n != 2 {
		t.Errorf("%d certificates loaded, want 2 (start and one renewal):\n%s", n, logs.String())
	}
	stop()
}
