// Package mailertest runs a real SMTP server (github.com/emersion/go-smtp)
// in the test process, capturing the messages it accepts, for the tests of
// what the server mails. Tests only.
package mailertest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Message is one message the server accepted.
type Message struct {
	From string
	To   []string
	Data string // the message as sent: headers, a blank line, the body
}

// Options shape the server.
type Options struct {
	// RejectRcpt, when set, refuses every recipient with this 550 reply.
	RejectRcpt string
	// STARTTLS offers STARTTLS with a certificate for 127.0.0.1 made for
	// the test (Server.RootCAs trusts it).
	STARTTLS bool
	// Username and Password, when set, are the only credentials AUTH
	// PLAIN accepts, and mail is refused before them.
	Username, Password string
}

// Server is a running SMTP server on 127.0.0.1.
type Server struct {
	Host    string
	Port    int
	RootCAs *x509.CertPool // trusts the STARTTLS certificate

	mu   sync.Mutex
	msgs []Message
}

// Start runs a server until the test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(l.Addr().String())
	s := &Server{Host: host}
	s.Port, _ = strconv.Atoi(port)
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		return &session{srv: s, o: o}, nil
	}))
	srv.Domain = "mailertest.local"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.MaxMessageBytes = 1 << 20
	srv.AllowInsecureAuth = !o.STARTTLS
	srv.ErrorLog = smtpLog{}
	if o.STARTTLS {
		cert, pool := selfSigned(t)
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		s.RootCAs = pool
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// Messages returns the messages accepted so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

type smtpLog struct{}

func (smtpLog) Printf(string, ...any) {}
func (smtpLog) Println(...any)        {}

type session struct {
	srv    *Server
	o      Options
	authed bool
	msg    Message
}

func (ss *session) AuthMechanisms() []string {
	if ss.o.Username == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != ss.o.Username || pass != ss.o.Password {
			return errors.New("invalid credentials")
		}
		ss.authed = true
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.o.Username != "" && !ss.authed {
		return smtp.ErrAuthRequired
	}
	ss.msg = Message{From: from}
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if ss.o.RejectRcpt != "" {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: ss.o.RejectRcpt}
	}
	ss.msg.To = append(ss.msg.To, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	var b bytes.Buffer
	if _, err := io.Copy(&b, r); err != nil {
		return err
	}
	ss.msg.Data = b.String()
	ss.srv.mu.Lock()
	ss.srv.msgs = append(ss.srv.msgs, ss.msg)
	ss.srv.mu.Unlock()
	return nil
}

func (ss *session) Reset()        { ss.msg = Message{} }
func (ss *session) Logout() error { return nil }

// selfSigned makes a certificate for 127.0.0.1 and the pool that trusts it.
func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}
