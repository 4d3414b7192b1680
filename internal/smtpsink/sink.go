// Package smtpsink is a local SMTP server for tests that keeps every
// message it is sent: the relay of the e-mail channel and of invitations.
package smtpsink

import (
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Options shape a sink.
type Options struct {
	User, Pass   string           // when User is set, MAIL needs AUTH PLAIN with these
	InsecureAuth bool             // offer AUTH without TLS
	RejectRcpt   bool             // answer RCPT with 550
	Cert         *tls.Certificate // offer STARTTLS with it (and AUTH once under TLS)
}

// Mail is one message the sink accepted.
type Mail struct {
	From     string
	To       []string
	Data     []byte
	TLS      bool   // it came under STARTTLS
	AuthUser string // the AUTH PLAIN user, "" without AUTH
}

// Sink is a running local SMTP server.
type Sink struct {
	Addr     string       // host:port it listens on
	Accepted atomic.Int32 // TCP connections taken

	opts Options
	mu   sync.Mutex
	msgs []Mail
}

// Messages returns the messages accepted so far, in order.
func (s *Sink) Messages() []Mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.msgs)
}

// Start runs a sink on 127.0.0.1 until the test ends. It fails the test
// when it cannot listen.
func Start(t testing.TB, opts Options) *Sink {
	t.Helper()
	sink := &Sink{opts: opts}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{sink: sink, conn: c}, nil
	}))
	srv.Domain = "sink.localhost"
	srv.ReadTimeout = 10 * time.Second
	srv.WriteTimeout = 10 * time.Second
	srv.ErrorLog = log.New(io.Discard, "", 0)
	srv.AllowInsecureAuth = opts.InsecureAuth
	if opts.Cert != nil {
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*opts.Cert}, MinVersion: tls.VersionTLS12}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sink.Addr = l.Addr().String()
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(counting{l, &sink.Accepted})
	}()
	t.Cleanup(func() {
		// Closing the listener too: a Close that comes before Serve has
		// registered it (a test that never dialled) would leave Serve
		// waiting in Accept for ever.
		srv.Close()
		l.Close()
		<-done
	})
	return sink
}

type counting struct {
	net.Listener
	n *atomic.Int32
}

func (l counting) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

type session struct {
	sink     *Sink
	conn     *smtp.Conn
	authUser string
	from     string
	to       []string
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != s.sink.opts.User || pass != s.sink.opts.Pass {
			return errors.New("invalid credentials")
		}
		s.authUser = user
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.sink.opts.User != "" && s.authUser == "" {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.sink.opts.RejectRcpt {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such user here"}
	}
	s.to = append(s.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, isTLS := s.conn.TLSConnectionState()
	s.sink.mu.Lock()
	s.sink.msgs = append(s.sink.msgs, Mail{From: s.from, To: s.to, Data: data, TLS: isTLS, AuthUser: s.authUser})
	s.sink.mu.Unlock()
	return nil
}

func (s *session) Reset()        { s.from, s.to = "", nil }
func (s *session) Logout() error { return nil }
