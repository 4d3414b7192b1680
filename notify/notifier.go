package notify

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"backupmon/engine"
	"backupmon/state"
)

// Defaults of the Options left at their zero value.
const (
	DefaultWorkers   = 4
	DefaultQueueSize = 4096
	DefaultTimeout   = 10 * time.Second
)

// Failures reported without an attempt being made.
const (
	// FailureQueueFull is reported when Deliver finds the queue full.
	FailureQueueFull = "notification queue full"
	// FailureClosed is reported for a notice handed to Deliver after Close
	// began, or still waiting in the queue when Close began.
	FailureClosed = "notifier closed"
	// FailureNoRelay is reported for an e-mail channel when SMTPConfig.Relay
	// is empty.
	FailureNoRelay = "no SMTP relay configured"
)

// MaxFailureLen is the most characters (runes) a failure string has.
const MaxFailureLen = 200

// Options configures a Notifier. The zero value of every field but Done
// is usable.
type Options struct {
	// Done receives the outcome of every attempt: the notice's Workspace,
	// Delivery and Attempt, and failure "" when the attempt succeeded, else
	// a one-line reason of at most MaxFailureLen characters. It is called
	// from the Notifier's goroutines, never from inside Deliver, possibly
	// from several goroutines at once. Nil discards the outcomes.
	Done func(ws, delivery engine.ID, attempt int, failure string)
	// Outcome, when not nil, receives every attempt's outcome instead of
	// Done, with what Done does not say: whether the failure is for good
	// (a remote 4xx no retry can mend) and the ticket a PSA attempt found
	// or made.
	Outcome func(ws, delivery engine.ID, attempt int, o engine.Outcome)
	// DashboardURL is the dashboard's address as users reach it, for the
	// job links of tickets, incidents and cards ("" none).
	DashboardURL string
	// Now is the clock of the webhook's sentAt and the e-mail's Date;
	// time.Now when nil.
	Now func() time.Time
	// Workers is the number of attempts made at the same time
	// (DefaultWorkers when 0 or less).
	Workers int
	// QueueSize is the number of notices waiting for a worker beyond which
	// Deliver reports FailureQueueFull (DefaultQueueSize when 0 or less).
	QueueSize int
	// Timeout bounds one attempt from the first dial to the last byte read
	// (DefaultTimeout when 0 or less).
	Timeout time.Duration
	// SMTP is the relay the e-mail channels are sent through.
	SMTP SMTPConfig
	// Logger receives one record per failed attempt, and the attempts
	// that succeeded at debug level; slog.Default() when nil.
	Logger *slog.Logger
	// Observe, when not nil, receives every attempt made (not those
	// refused by a full queue or a closed notifier): the channel type,
	// whether it succeeded, and how long it took (for metrics).
	Observe func(channelType string, ok bool, took time.Duration)
	// AllowPrivate lets webhook and Slack deliveries connect to internal
	// addresses (loopback, private, link-local, ...: dialguard.go), for
	// installs inside a private network. Cloud metadata addresses and
	// AdminListener stay refused. False: such a connection is not made and
	// the attempt fails with a RefusedError's text.
	AllowPrivate bool
	// AdminListener is the server's admin listener, refused to every
	// delivery whatever AllowPrivate says (bound to all addresses: its
	// port on any of this machine's addresses). Zero: none.
	AdminListener netip.AddrPort

	// proxy names the HTTP proxy of a request (tests);
	// http.ProxyFromEnvironment when nil.
	proxy func(*http.Request) (*url.URL, error)
	// afterCheck, when not nil (tests), runs on every checked connection
	// once the address rule let it through, before it is made: an error
	// stops it.
	afterCheck func(address string) error
}

// Notifier sends notices to their channels with a fixed pool of workers. It
// implements engine.Deliverer. Make one with New; its methods are safe for
// concurrent use.
type Notifier struct {
	report    func(ws, delivery engine.ID, attempt int, o engine.Outcome)
	dashboard string
	zones     sync.Map // Autotask zone lookups: zone URL and user → REST address
	tokens    sync.Map // HaloPSA access tokens by channel and credentials
	observe   func(channelType string, ok bool, took time.Duration)
	now       func() time.Time
	timeout   time.Duration
	smtp      SMTPConfig
	helo      string
	log       *slog.Logger
	http      *http.Client
	tr        *http.Transport
	queue     chan engine.Notice
	mu        sync.RWMutex // guards closed and the sends on queue against close(queue)
	closed    bool
	closing   atomic.Bool // set when Close begins: workers stop attempting
	workers   sync.WaitGroup
	rejected  sync.WaitGroup // the goroutines reporting refused notices
}

var _ engine.Deliverer = (*Notifier)(nil)

// New starts a Notifier with opts.Workers worker goroutines. Stop it with
// Close. It does not fail: a bad channel or relay shows as the failure of
// the attempts that use it.
func New(opts Options) *Notifier {
	opts.Workers = positiveOr(opts.Workers, DefaultWorkers)
	opts.QueueSize = positiveOr(opts.QueueSize, DefaultQueueSize)
	opts.Timeout = positiveOr(opts.Timeout, DefaultTimeout)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Done == nil {
		opts.Done = func(engine.ID, engine.ID, int, string) {}
	}
	if opts.Outcome == nil {
		done := opts.Done
		opts.Outcome = func(ws, id engine.ID, attempt int, o engine.Outcome) { done(ws, id, attempt, o.Failure) }
	}
	if opts.proxy == nil {
		opts.proxy = http.ProxyFromEnvironment
	}
	tr := guardedTransport(newGuard(opts.AllowPrivate, opts.AdminListener), opts.proxy, opts.afterCheck)
	tr.MaxIdleConnsPerHost = opts.Workers
	n := &Notifier{
		report:    opts.Outcome,
		dashboard: opts.DashboardURL,
		observe:   opts.Observe,
		now:       opts.Now,
		timeout:   opts.Timeout,
		smtp:      opts.SMTP,
		helo:      heloName(),
		log:       opts.Logger,
		tr:        tr,
		http: &http.Client{
			Transport: tr,
			// A redirect is the receiver's answer, not a place to
			// follow: it is reported as a failure (HTTP 3xx).
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		queue: make(chan engine.Notice, opts.QueueSize),
	}
	for range opts.Workers {
		n.workers.Go(n.work)
	}
	return n
}

// positiveOr returns v, or def when v is not above zero (an option left
// out).
func positiveOr[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Deliver queues one attempt of notice nt and returns at once; it never
// blocks. The outcome comes to Options.Done. When the queue is full, or
// Close has begun, Done receives FailureQueueFull or FailureClosed from a
// goroutine of its own, so that a Done that calls back into the engine
// cannot deadlock with the caller. The notice's Alert and Job bytes are
// read until the attempt ends: the caller must not change them.
func (n *Notifier) Deliver(nt engine.Notice) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.closed {
		n.reject(nt, FailureClosed)
		return
	}
	select {
	case n.queue <- nt:
	default:
		n.reject(nt, FailureQueueFull)
	}
}

// reject reports failure for nt from a new goroutine. Called with n.mu
// held for reading.
func (n *Notifier) reject(nt engine.Notice, failure string) {
	n.log.Warn("notification not attempted", noticeAttrs(nt), slog.String("failure", failure))
	if n.closed {
		// Close has returned or is returning: it no longer waits.
		go n.done(nt, failure)
		return
	}
	n.rejected.Go(func() { n.done(nt, failure) })
}

// Close stops accepting notices, lets the attempts in flight finish (each
// within Options.Timeout), reports FailureClosed for the notices still
// queued, and returns when every worker has stopped and every outcome has
// been handed to Done. A second call waits the same way and does nothing
// more. Deliver after Close reports FailureClosed.
func (n *Notifier) Close() {
	n.mu.Lock()
	if !n.closed {
		n.closing.Store(true)
		n.closed = true
		close(n.queue)
	}
	n.mu.Unlock()
	n.workers.Wait()
	n.rejected.Wait()
	n.tr.CloseIdleConnections()
}

func (n *Notifier) work() {
	for nt := range n.queue {
		if n.closing.Load() {
			n.log.Warn("notification not attempted", noticeAttrs(nt), slog.String("failure", FailureClosed))
			n.done(nt, FailureClosed)
			continue
		}
		n.attempt(nt)
	}
}

// attempt makes one attempt and reports it.
func (n *Notifier) attempt(nt engine.Notice) {
	start := time.Now()
	out := n.send(nt)
	failure := out.Failure
	took := time.Since(start)
	if n.observe != nil {
		n.observe(nt.Channel.Type, failure == "", took)
	}
	if failure == "" {
		n.log.Debug("notification sent", noticeAttrs(nt), slog.Duration("took", took))
	} else {
		n.log.Warn("notification failed", noticeAttrs(nt), slog.Duration("took", took), slog.String("failure", failure))
	}
	n.report(nt.Workspace, nt.Delivery, nt.Attempt, out)
}

// done reports an attempt not made, for failure.
func (n *Notifier) done(nt engine.Notice, failure string) {
	n.report(nt.Workspace, nt.Delivery, nt.Attempt, engine.Outcome{Failure: failure})
}

// send makes one attempt and returns its outcome. A panic in the
// channel's code is a failure, not the end of the process.
func (n *Notifier) send(nt engine.Notice) (out engine.Outcome) {
	defer func() {
		if p := recover(); p != nil {
			n.log.Error("notification attempt panicked", noticeAttrs(nt),
				slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
			out = engine.Outcome{Failure: cleanFailure(fmt.Sprintf("internal error: %v", p))}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), n.timeout)
	defer cancel()
	var err error
	switch nt.Channel.Type {
	case engine.ChannelWebhook:
		err = n.sendWebhook(ctx, nt)
	case engine.ChannelSlack:
		err = n.sendSlack(ctx, nt)
	case engine.ChannelEmail:
		err = n.sendEmail(ctx, nt)
	case state.ChannelTeams:
		err = n.sendTeams(ctx, nt)
	case state.ChannelPagerDuty:
		_, err = n.sendPagerDuty(ctx, nt, nt.AlertID.String())
	case state.ChannelConnectWise, state.ChannelAutotask, state.ChannelHaloPSA:
		out.Ticket, err = n.sendTicket(ctx, nt)
	default:
		err = fmt.Errorf("unknown channel type %q", nt.Channel.Type)
	}
	if err != nil {
		out.Failure, out.Permanent = n.outcomeOf(err)
	}
	return out
}

// failure turns an attempt's error into the text Done receives. Timeouts
// read "timeout after <Timeout>" with the step they interrupted.
func (n *Notifier) failure(err error) string {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		msg := "timeout after " + n.timeout.String()
		var se *stepError
		if errors.As(err, &se) {
			msg = se.step + ": " + msg
		}
		return msg
	}
	return cleanFailure(err.Error())
}

// stepError names the step of a protocol exchange that failed, without
// adding the step's wording to a timeout's message twice.
type stepError struct {
	step string
	err  error
}

func (e *stepError) Error() string { return e.step + ": " + e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// cleanFailure makes s one line of at most MaxFailureLen runes: runs of
// spaces and control characters become one space, invalid UTF-8 becomes
// U+FFFD, and a longer text is cut and ends with "…".
func cleanFailure(s string) string {
	fields := strings.FieldsFunc(strings.ToValidUTF8(s, "\uFFFD"), func(r rune) bool {
		return r == ' ' || unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
	})
	s = strings.Join(fields, " ")
	if s == "" {
		return "failed"
	}
	if utf8.RuneCountInString(s) <= MaxFailureLen {
		return s
	}
	i := 0
	for range MaxFailureLen - 1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return strings.TrimRight(s[:i], " ") + "…"
}

func noticeAttrs(nt engine.Notice) slog.Attr {
	return slog.Group("notice",
		slog.String("workspace", nt.Workspace.String()),
		slog.String("delivery", nt.Delivery.String()),
		slog.Int("attempt", nt.Attempt),
		slog.String("channel", nt.Channel.ID.String()),
		slog.String("type", nt.Channel.Type),
		slog.String("event", nt.Event))
}

// heloName is the name given in the SMTP greeting: the host's name when it
// is a plausible domain name, else "localhost" (as net/smtp does).
func heloName() string {
	h, err := os.Hostname()
	if err != nil || h == "" || len(h) > 253 {
		return "localhost"
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return "localhost"
		}
	}
	return h
}

// tlsConfig returns the TLS configuration of a STARTTLS with host: a clone
// of cfg (or an empty one) whose ServerName is host unless cfg sets one.
func tlsConfig(cfg *tls.Config, host string) *tls.Config {
	var c *tls.Config
	if cfg != nil {
		c = cfg.Clone()
	} else {
		c = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if c.ServerName == "" {
		c.ServerName = host
	}
	return c
}
