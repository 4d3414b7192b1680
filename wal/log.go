package wal

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"backupmon/vfs"
)

// Record is what the log stores: a type byte (never 0) and a payload the
// caller encodes.
type Record interface {
	Type() byte
	AppendPayload(dst []byte) []byte
}

// Options configure a Log. The zero value is usable.
type Options struct {
	SegmentSize int                                   // target segment size; default 16 MiB
	NoSync      bool                                  // skip fsync (benchmarks of the CPU path only)
	Logger      *slog.Logger                          // default slog.Default()
	OnFatal     func(err error)                       // called once when a write or fsync fails; default: log at Error level and os.Exit(1)
	BeforeSync  func(first, last uint64)              // test hook: called by the committer before it writes+fsyncs a batch holding LSNs first..last; it may block
	Observe     func(records int, sync time.Duration) // called after each durable batch (metrics); may be nil
	MaxBatch    int                                   // most records per WriteBatch; default 1024
	QueueSize   int                                   // capacity of the submit channel; default 4096
	FS          vfs.FS                                // the file system; default vfs.OS (tests pass a vfs.Faulty)
}

// withDefaults returns opts with every unset field at its default.
func (opts Options) withDefaults() Options {
	if opts.SegmentSize <= 0 {
		opts.SegmentSize = 16 << 20
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.OnFatal == nil {
		logger := opts.Logger
		opts.OnFatal = func(err error) {
			logger.Error("wal: write failed; stopping the process", "err", err)
			os.Exit(1)
		}
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 1024
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 4096
	}
	opts.FS = vfs.Or(opts.FS)
	return opts
}

var (
	// ErrClosed is given to done for records submitted after Close, and
	// returned by calls on a closed Log.
	ErrClosed = errors.New("wal: closed")
	// ErrFailed is given (wrapping the cause) to done for every record of a
	// batch whose write or fsync failed and every record after it.
	ErrFailed = errors.New("wal: failed")
)

// errStarted is returned by Replay after Start.
var errStarted = errors.New("replay after Start")

// Log is the write-ahead log. One committer goroutine writes every record;
// any goroutine may Submit.
type Log struct {
	dir  string
	opts Options
	st   store

	first   atomic.Uint64 // first LSN still in the log
	last    atomic.Uint64 // last durable LSN
	written atomic.Uint64 // bytes of records made durable since Open
	next    atomic.Uint64 // LSN for the next record the committer takes

	queue *Queue

	startOnce sync.Once
	started   atomic.Bool
	stopped   chan struct{} // closed when the committer returns

	truncMu     sync.Mutex // serialises TruncateFront with itself and with closing the store
	storeClosed bool

	// Owned by the committer goroutine.
	pending []pending
	b       batch
	scratch []byte
}

// Open opens the log in dir, creating the directory and a fresh log when
// there is none. It finishes an interrupted tidwall truncation, repairs a
// torn tail of the last segment (saving the cut bytes to <segment>.broken),
// and returns an error naming the file and offset when the last segment is
// damaged before valid records. The returned Log takes records once Start is
// called; Replay it first.
func Open(dir string, opts Options) (*Log, error) {
	return open(dir, opts, openTidwall)
}

// open is Open with the store made by openStore, so tests can use a store
// whose writes fail.
func open(dir string, opts Options, openStore func(dir string, opts Options) (store, error)) (*Log, error) {
	opts = opts.withDefaults()
	l, err := openLog(dir, opts, openStore)
	if err != nil {
		return nil, fmt.Errorf("open wal %s: %w", dir, err)
	}
	return l, nil
}

func openLog(dir string, opts Options, openStore func(dir string, opts Options) (store, error)) (*Log, error) {
	fsys := opts.FS
	_, err := fsys.Stat(dir)
	created := errors.Is(err, fs.ErrNotExist)
	if err := fsys.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	if created && !opts.NoSync {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		if err := vfs.SyncDir(fsys, filepath.Dir(abs)); err != nil {
			return nil, err
		}
	}
	if err := finishTruncation(dir, opts); err != nil {
		return nil, err
	}
	if err := repairTail(fsys, dir, opts.Logger); err != nil {
		return nil, err
	}
	st, err := openStore(dir, opts)
	if err != nil {
		return nil, err
	}
	first, err := st.FirstIndex()
	if err != nil {
		st.Close()
		return nil, err
	}
	last, err := st.LastIndex()
	if err != nil {
		st.Close()
		return nil, err
	}
	l := &Log{
		dir:     dir,
		opts:    opts,
		st:      st,
		queue:   NewQueue(opts.QueueSize, ErrClosed),
		stopped: make(chan struct{}),
		pending: make([]pending, 0, opts.MaxBatch),
	}
	l.first.Store(first)
	l.last.Store(last)
	l.next.Store(last + 1)
	opts.Logger.Info("wal: opened", "dir", dir, "first_lsn", first, "last_lsn", last)
	return l, nil
}

// Written returns the bytes of records made durable since Open (their
// frames, without tidwall's own framing): the log's growth, for deciding
// when a snapshot is worth its cost.
func (l *Log) Written() uint64 { return l.written.Load() }

// FirstLSN returns the first LSN still in the log (LastLSN()+1 when empty).
func (l *Log) FirstLSN() uint64 { return l.first.Load() }

// LastLSN returns the last durable LSN (0 for a new log).
func (l *Log) LastLSN() uint64 { return l.last.Load() }

// NextLSN returns the LSN the committer will assign to the next record it
// takes from the queue. Any goroutine may call it.
func (l *Log) NextLSN() uint64 { return l.next.Load() }

// TruncateFront drops every entry before lsn; lsn is clamped to LastLSN()+1,
// and an lsn at or before FirstLSN() does nothing. It is safe to call while
// the committer runs. It returns ErrClosed after Close, the ErrFailed error
// after a failed write, or the wrapped error of the truncation (after which
// the next write fails and the log stops).
func (l *Log) TruncateFront(lsn uint64) error {
	l.truncMu.Lock()
	defer l.truncMu.Unlock()
	if l.storeClosed {
		return ErrClosed
	}
	if err := l.queue.Err(); err != nil {
		return err
	}
	lsn = min(lsn, l.last.Load()+1)
	if lsn <= l.first.Load() {
		return nil
	}
	if err := l.st.TruncateFront(lsn); err != nil {
		return fmt.Errorf("truncate wal %s before %d: %w", l.dir, lsn, err)
	}
	l.first.Store(lsn)
	return nil
}

// Close stops taking records, writes and fsyncs what is queued, calls their
// done, and closes the files. It starts the committer if Start was not
// called. It returns ErrClosed when called again, the ErrFailed error if a
// write failed, or the wrapped error from closing the files.
func (l *Log) Close() error {
	l.Start()
	if !l.queue.Close() {
		return ErrClosed
	}
	<-l.stopped

	l.truncMu.Lock()
	l.storeClosed = true
	err := l.st.Close()
	l.truncMu.Unlock()
	if ferr := l.queue.Err(); ferr != nil {
		err = errors.Join(ferr, err)
	}
	if err != nil {
		return fmt.Errorf("close wal %s: %w", l.dir, err)
	}
	return nil
}
