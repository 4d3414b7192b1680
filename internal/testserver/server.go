package testserver

import (
	"context"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"backupmon/engine"
	"backupmon/internal/syncbuf"
	"backupmon/password"
	"backupmon/transport"
	"backupmon/vfs"
	"backupmon/wal"
)

// T0 is where the development clock starts unless told otherwise: a
// Wednesday.
var T0 = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

// CursorKey signs the cursors of every in-process server, kept across
// restarts as backupmon serve keeps <data>/cursor.key.
var CursorKey = []byte("test cursor key, the same across restarts")

// Options change a server that Start starts; a zero field takes its default.
type Options struct {
	Dir         string                   // the data directory; default a new temporary one
	Start       time.Time                // where the development clock starts; default T0
	NoDevClock  bool                     // run on the system clock, without POST /admin/v1/clock
	BeforeSync  func(first, last uint64) // the log's BeforeSync hook
	ReadTimeout time.Duration            // the listeners' read timeout; default the transport's
	Hasher      *password.Hasher         // the admin API's password hasher; default the transport's
	// FS is the file system under the log and the snapshots, which a test
	// makes fail. With it, a failed write is counted (Fatals) and logged
	// instead of failing the test, and the server goes on, fail-stopped.
	FS *vfs.Faulty
	// PublicListener is served as the public listener at the first start
	// instead of a new loopback one.
	PublicListener net.Listener
	// Configure edits the transport's configuration at every start, once
	// the engine is open (limits, TLS, the re-reading of e-mails).
	Configure func(cfg *transport.Config, eng *engine.Engine)
}

// Server is an engine and the transport's two listeners in the test's
// process, on loopback; its Client talks to them. It stops at the end of
// the test that started it.
type Server struct {
	*Client
	Dir   string
	Eng   *engine.Engine
	Clock *engine.DevClock // nil with NoDevClock
	// Logs holds everything the engine, the log and the transport logged
	// (at debug level), across restarts.
	Logs *syncbuf.Buffer
	// PublicAddr and AdminAddr are the listeners' host:port.
	PublicAddr, AdminAddr string
	// PublicDone receives what ServePublic returned, once it has.
	PublicDone chan error

	opts      Options
	srv       *transport.Server
	closed    bool
	fatals    atomic.Int32 // failed writes, with Options.FS
	keepClock bool         // the next start keeps Clock where it stands (RestartAt)
}

// Start opens an engine on o.Dir and serves it on two loopback listeners;
// it fails t when either does not start.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	if o.Start.IsZero() {
		o.Start = T0
	}
	s := &Server{Client: &Client{T: t, Token: AdminToken}, opts: o, Dir: o.Dir, Logs: &syncbuf.Buffer{}}
	s.start()
	t.Cleanup(s.Close)
	return s
}

func (s *Server) start() {
	t := s.T
	t.Helper()
	logger := slog.New(slog.NewTextHandler(s.Logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var clock engine.Clock = engine.SystemClock{}
	if !s.opts.NoDevClock {
		if s.Clock == nil {
			s.Clock = engine.NewDevClock(s.opts.Start)
		}
		clock = s.Clock
	}
	metrics := transport.NewMetrics()
	onFatal := func(err error) { t.Errorf("log failed: %v", err) }
	var fsys vfs.FS = vfs.OS
	if s.opts.FS != nil {
		fsys = s.opts.FS
		onFatal = func(err error) {
			s.fatals.Add(1)
			logger.Error("wal: write failed (the test's OnFatal: the process goes on)", "err", err)
		}
	}
	eng, err := engine.Open(engine.Options{
		Dir: s.Dir, Clock: clock, Logger: logger, KeepClock: s.keepClock, FS: fsys,
		WAL: wal.Options{Logger: logger, BeforeSync: s.opts.BeforeSync, Observe: metrics.ObserveWAL, OnFatal: onFatal},
	})
	if err != nil {
		t.Fatalf("open engine: %v", err)
	}
	s.Eng = eng
	cfg := transport.Config{Engine: eng, Logger: logger, Metrics: metrics, AdminToken: AdminToken, DevClock: !s.opts.NoDevClock,
		CursorKey: CursorKey, ReadTimeout: s.opts.ReadTimeout, Hasher: s.opts.Hasher}
	if s.opts.Configure != nil {
		s.opts.Configure(&cfg, eng)
	}
	s.srv = transport.New(cfg)
	pub := s.opts.PublicListener
	s.opts.PublicListener = nil // a restart listens anew
	if pub == nil {
		pub = listen(t)
	}
	adm := listen(t)
	s.PublicDone = make(chan error, 1)
	go func(srv *transport.Server, done chan error) { done <- srv.ServePublic(pub) }(s.srv, s.PublicDone)
	go s.srv.ServeAdmin(adm)
	s.PublicAddr, s.AdminAddr = pub.Addr().String(), adm.Addr().String()
	s.PublicURL, s.AdminURL = "http://"+s.PublicAddr, "http://"+s.AdminAddr
	s.HTTP = newHTTPClient()
	s.closed = false
}

// listen opens a loopback listener on a free port.
func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on loopback: %v", err)
	}
	return ln
}

// Close stops the listeners and closes the engine cleanly (with a
// snapshot); a second call does nothing.
func (s *Server) Close() {
	if s.closed {
		return
	}
	s.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Idle client connections first: one the client dialled but never
	// used is not idle to the server, which would wait for it until ctx
	// expires.
	s.closeIdle()
	s.srv.Shutdown(ctx)
	s.closeIdle()
	if err := s.Eng.Close(); err != nil {
		if s.fatals.Load() > 0 { // the failed log refuses the last snapshot
			s.T.Logf("close engine after the log failed: %v", err)
		} else {
			s.T.Errorf("close engine: %v", err)
		}
	}
}

// Fatals returns how many writes of the log failed since the last start
// (with Options.FS).
func (s *Server) Fatals() int { return int(s.fatals.Load()) }

// Restart closes the server and opens a new one on the same data
// directory and development clock.
func (s *Server) Restart() {
	s.T.Helper()
	s.Close()
	s.fatals.Store(0)
	s.start()
}

// RestartAt closes the server, lets the development clock stand at at
// while it is down, and opens a new one there (instead of where the log
// left the clock): time passes during the downtime.
func (s *Server) RestartAt(at time.Time) {
	s.T.Helper()
	s.Close()
	s.fatals.Store(0)
	s.Clock.Set(at)
	s.keepClock = true
	defer func() { s.keepClock = false }()
	s.start()
}
