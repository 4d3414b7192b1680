// Package smtpin receives report e-mails over SMTP and hands each one to the
// engine as a report (or, unreadable, as an unparsed e-mail), answering 250
// only once the engine says it is durable (decisions.md 10).
package smtpin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/emersion/go-smtp"

	"backupmon/engine"
	"backupmon/mailparse"
	"backupmon/mailstore"
	"backupmon/suggest"
	"backupmon/transport/connlimit"
)

// Limits of the listener.
const (
	MaxMessageBytes = mailparse.MaxMessageBytes // 552 above it
	maxRecipients   = 50
	maxLineLength   = 16 << 10 // HTML mails sent 8bit can have long lines
	ioTimeout       = 2 * time.Minute
	tokenLength     = 20
)

// Bounds of the listener unless Config says otherwise (decisions.md, SMTP
// bounds).
const (
	// DefaultMaxSessions bounds the sessions served at once.
	DefaultMaxSessions = 512
	// DefaultMaxSessionsPerAddress bounds one client address's sessions:
	// a mail relay sends over a few connections at once (Postfix: 20 to
	// one destination).
	DefaultMaxSessionsPerAddress = 32
	// DefaultSessionLifetime bounds a session, busy or idle: a 10 MiB
	// message at 256 kbit/s takes under 6 minutes, and relays reuse a
	// connection for 5 minutes at most (Postfix).
	DefaultSessionLifetime = 10 * time.Minute
	// DefaultMessageMemory is the byte budget of messages being received
	// at once, across sessions: 22 messages of 10 MiB besides each
	// session's first 64 KiB.
	DefaultMessageMemory = 256 << 20
)

// The contract's messages (decisions.md 10, api.md 8.3).
const (
	msgUnknown   = "No such ingest address"
	msgInactive  = "Workspace suspended"
	msgDailyCap  = "Daily ingest cap (100 reports/job) reached — try again after the trailing 24h window rolls over"
	msgTryLater  = "The report was not recorded; try again later"
	msgDuplicate = "An e-mail with this Message-ID is being recorded right now; try again shortly"
)

// Outcomes counted by Config.Observe, one per recipient of each e-mail.
const (
	OutcomeRecorded  = "recorded"
	OutcomeDuplicate = "duplicate"
	OutcomeUnparsed  = "unparsed"
	OutcomeUnknown   = "unknown_recipient"
	OutcomeInactive  = "inactive"
	OutcomeCapped    = "cap_reached"
	OutcomeFailed    = "not_recorded"
)

// Config configures a Server.
type Config struct {
	// Domain is the ingest domain: recipients elsewhere are unknown.
	Domain string
	// Hostname is the name the server greets with; default Domain.
	Hostname string
	// TLS, when set, offers STARTTLS.
	TLS *tls.Config
	// Suggest returns the catalogue's suggestion for an alert's text from
	// vendor's e-mails; nil: no suggestions.
	Suggest func(vendor, text string) (engine.Suggestion, bool)
	// Observe counts one recipient's outcome (the Outcome constants) for a
	// vendor ("" when the recipient was refused before its job was known).
	Observe func(outcome, vendor string)
	// Logger receives failures; default slog.Default().
	Logger *slog.Logger
	// Timeout bounds the reading of one command (or of a message's data)
	// and the writing of one answer; a client slower than that is
	// disconnected. Default 2 minutes.
	Timeout time.Duration
	// MaxSessions bounds the sessions served at once, MaxSessionsPerAddress
	// those of one client address (an IPv4 address, an IPv6 /64); a
	// connection over either is answered "421 4.7.0 Too many connections,
	// try again later" and closed. Defaults DefaultMaxSessions,
	// DefaultMaxSessionsPerAddress.
	MaxSessions, MaxSessionsPerAddress int
	// SessionLifetime bounds a session from its connection on, however
	// busy: then it is answered "421 4.4.2 Session time limit reached,
	// closing connection" and closed (a message being read is not
	// recorded). Default DefaultSessionLifetime.
	SessionLifetime time.Duration
	// MessageMemory is the byte budget of messages being received at once
	// across sessions: a message that would take more is refused "452
	// 4.3.1" (the sender retries). Each session may hold its message's
	// first min(64 KiB, MessageMemory/(2×MaxSessions)) bytes whatever the
	// others hold, so that ordinary report e-mails get through; the rest
	// of the budget is shared. Default DefaultMessageMemory.
	MessageMemory int64
	// Refused, when set, counts a connection refused at a session limit
	// (reason "total" or "address").
	Refused func(reason string)
}

// Suggestions is the rule catalogue (package suggest) in the engine's
// terms: the Suggest of a Config, and Reparse's, as serve has them.
func Suggestions(vendor, text string) (engine.Suggestion, bool) {
	s, ok := suggest.For(vendor, text)
	if !ok {
		return engine.Suggestion{}, false
	}
	return engine.Suggestion{Cause: s.LikelyCause, Confidence: s.Confidence, Category: s.Category}, true
}

// Ingest is what the listener needs of the engine: the check of a
// recipient, and the record of one e-mail for one recipient. An
// *engine.Engine is one; a cluster node's is another, which finds each
// token's shard.
type Ingest interface {
	MailRecipient(token string) engine.MailReply
	Mail(token string, in *engine.MailInput) engine.MailReply
}

// RawStore keeps the raw messages of unreadable e-mails: a
// *mailstore.Store on a single node, the cluster's object store on a
// cluster node.
type RawStore interface {
	// Put keeps raw durably and returns its reference.
	Put(raw []byte) (string, error)
	// Get returns the message ref names.
	Get(ref string) ([]byte, error)
	// Remove deletes the messages refs name.
	Remove(refs []string) error
}

var _ RawStore = (*mailstore.Store)(nil)

// Server is the SMTP ingest listener.
type Server struct {
	eng    Ingest
	store  RawStore
	cfg    Config
	srv    *smtp.Server
	budget *budget
	open   openConns // the sessions' connections
}

// New makes a Server that records e-mails in eng and keeps unreadable ones'
// raw messages in store.
func New(eng Ingest, store RawStore, cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Hostname == "" {
		cfg.Hostname = cfg.Domain
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = ioTimeout
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.MaxSessionsPerAddress <= 0 {
		cfg.MaxSessionsPerAddress = DefaultMaxSessionsPerAddress
	}
	if cfg.SessionLifetime <= 0 {
		cfg.SessionLifetime = DefaultSessionLifetime
	}
	if cfg.MessageMemory <= 0 {
		cfg.MessageMemory = DefaultMessageMemory
	}
	cfg.Domain = strings.ToLower(cfg.Domain)
	s := &Server{eng: eng, store: store, cfg: cfg, budget: newBudget(cfg.MessageMemory, cfg.MaxSessions)}
	srv := smtp.NewServer(backend{s})
	srv.Domain = cfg.Hostname
	srv.MaxMessageBytes = MaxMessageBytes
	srv.MaxRecipients = maxRecipients
	srv.MaxLineLength = maxLineLength
	srv.ReadTimeout = cfg.Timeout
	srv.WriteTimeout = cfg.Timeout
	srv.TLSConfig = cfg.TLS
	srv.EnableSMTPUTF8 = true
	srv.ErrorLog = &slogAdapter{l: cfg.Logger}
	s.srv = srv
	return s
}

// Serve serves sessions on l until Shutdown, within the session limits
// (a connection over one is answered 421 at once) and each for at most
// SessionLifetime; a temporary accept error (EMFILE, ...) is retried, not
// returned.
func (s *Server) Serve(l net.Listener) error { return s.srv.Serve(s.limit(l)) }

// Shutdown stops accepting, ends at once the sessions waiting for a
// command (421 4.3.2), lets those receiving a message's data finish it and
// ends them at their next command, and returns once every session is over,
// or ctx's error if ctx ended first.
func (s *Server) Shutdown(ctx context.Context) error {
	done := make(chan struct{})
	defer close(done)
	go s.open.endIdle(done)
	return s.srv.Shutdown(ctx)
}

// Close closes the listener and every connection at once; a session whose
// mail is being recorded loses its answer (the sender retries and finds a
// duplicate).
func (s *Server) Close() error { return s.srv.Close() }

// ErrServerClosed is what Serve returns after Shutdown.
var ErrServerClosed = smtp.ErrServerClosed

type backend struct{ s *Server }

func (b backend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	lc, _ := c.Conn().(*lifetimeConn) // before STARTTLS: the accepted connection
	return &session{s: b.s, conn: lc}, nil
}

// recipient is one accepted RCPT of the current message.
type recipient struct {
	token  string
	vendor string
	rules  *engine.MailRules
}

type session struct {
	s     *Server
	conn  *lifetimeConn // nil when served without Serve's listener
	rcpts []recipient
}

func (ss *session) Reset()        { ss.rcpts = ss.rcpts[:0] }
func (ss *session) Logout() error { return nil }

// Mail starts a message; one whose declared SIZE the memory budget cannot
// take now is refused 452 4.3.1 at once rather than after its data.
func (ss *session) Mail(_ string, opts *smtp.MailOptions) error {
	ss.rcpts = ss.rcpts[:0]
	if opts != nil && !ss.s.budget.mayTake(opts.Size) {
		return errBusy
	}
	return nil
}

// Rcpt accepts an ingest address whose job can take a report now.
func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	token, ok := ss.s.token(to)
	if !ok {
		ss.s.observe(OutcomeUnknown, "")
		return errUnknown
	}
	for _, r := range ss.rcpts {
		if r.token == token {
			return nil // named twice: one report
		}
	}
	r := ss.s.eng.MailRecipient(token)
	if err := ss.s.refusal(r); err != nil {
		return err
	}
	ss.rcpts = append(ss.rcpts, recipient{token: token, vendor: r.Vendor, rules: r.Rules})
	return nil
}

// token returns the ingest token of an address at the ingest domain.
func (s *Server) token(addr string) (string, bool) {
	addr = strings.Trim(strings.TrimSpace(addr), "<>")
	at := strings.LastIndexByte(addr, '@')
	if at <= 0 || !strings.EqualFold(addr[at+1:], s.cfg.Domain) {
		return "", false
	}
	local := strings.ToLower(addr[:at])
	if len(local) != tokenLength {
		return "", false
	}
	for i := 0; i < len(local); i++ {
		c := local[i]
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return "", false
		}
	}
	return local, true
}

var (
	errUnknown = &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: msgUnknown}
	errTryLate = &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: msgTryLater}
	// errLineTooLong refuses a message with a line over maxLineLength
	// (RFC 5321 4.5.3.1.6 allows 1,000 octets; long HTML lines are common,
	// so the limit is higher).
	errLineTooLong = &smtp.SMTPError{Code: 500, EnhancedCode: smtp.EnhancedCode{5, 5, 6}, Message: "Line too long: the message has a line over 16 KiB"}
)

// refusal maps a refused recipient to its SMTP answer (and counts it); nil
// for an accepted one.
func (s *Server) refusal(r engine.MailReply) error {
	switch r.Outcome {
	case engine.MailAccepted, engine.MailDuplicate, engine.MailKeptUnparsed:
		return nil
	case engine.MailUnknownRecipient:
		s.observe(OutcomeUnknown, "")
		return errUnknown
	case engine.MailInactive:
		s.observe(OutcomeInactive, r.Vendor)
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: msgInactive}
	case engine.MailCapReached:
		s.observe(OutcomeCapped, r.Vendor)
		return &smtp.SMTPError{Code: 452, EnhancedCode: smtp.EnhancedCode{4, 2, 2}, Message: msgDailyCap}
	case engine.MailInFlight:
		s.observe(OutcomeFailed, r.Vendor)
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: msgDuplicate}
	default:
		s.observe(OutcomeFailed, r.Vendor)
		return errTryLate
	}
}

func (s *Server) observe(outcome, vendor string) {
	if s.cfg.Observe != nil {
		s.cfg.Observe(outcome, vendor)
	}
}

// Data reads the message and records it for every recipient; it answers
// 250 (nil) only when each is durable. A message with several recipients
// that fails for one is refused whole: the sender retries it, and the
// recipients that took it see the retry as a duplicate by its Message-ID.
//
// The message is read into memory within the server's budget (452 4.3.1
// when it is spent), which it holds until it is recorded.
func (ss *session) Data(r io.Reader) error {
	if ss.conn != nil {
		ss.conn.dataBegins(ss.s.cfg.Timeout)
		defer ss.conn.dataEnds()
	}
	raw, release, err := ss.s.budget.read(r) // nothing keeps raw past this call: parsing and the store copy what they keep
	defer release()
	if err != nil {
		var se *smtp.SMTPError
		if errors.As(err, &se) {
			return se // 552 when over the size limit
		}
		if errors.Is(err, smtp.ErrTooLongLine) {
			// Permanent: the same message would fail the same way on
			// every retry. go-smtp then closes the connection, whose
			// reader is past repair.
			return errLineTooLong
		}
		return errTryLate
	}
	if len(ss.rcpts) == 0 {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 5, 1}, Message: "No valid recipients"}
	}
	var worst error
	parsed := map[string]*parse{} // by vendor and rules: each parser reads the message once
	for _, rc := range ss.rcpts {
		k := rc.vendor
		if rc.rules != nil {
			k += "\x00" + rc.rules.Key
		}
		p := parsed[k]
		if p == nil {
			p = readMail(ss.s.cfg.Suggest, rc.vendor, rc.rules, raw)
			parsed[k] = p
		}
		if err := ss.s.deliver(rc, p, raw); err != nil && worse(err, worst) {
			worst = err
		}
	}
	return worst
}

// worse reports whether a should answer DATA rather than b: any refusal
// over none, and a temporary one over a permanent one. A 5xx makes the
// sender bounce the whole message, so the recipients that failed for now
// would never get it; after a 4xx it retries, the recipients refused for
// good are refused again at RCPT (and bounced alone), and those that took
// it see a duplicate.
func worse(a, b error) bool {
	if b == nil {
		return true
	}
	ae, _ := a.(*smtp.SMTPError)
	be, _ := b.(*smtp.SMTPError)
	return ae != nil && be != nil && ae.Code/100 == 4 && be.Code/100 == 5
}

// parse is one vendor parser's reading of a message.
type parse struct {
	in     engine.MailInput
	unread bool
}

// readMail reads raw with the workspace's parsing rules or vendor's parser
// (readWith) into the engine's input, with the suggestion for its text when
// suggest is set.
func readMail(suggest func(vendor, text string) (engine.Suggestion, bool), vendor string, rules *engine.MailRules, raw []byte) *parse {
	p := &parse{}
	res, m, err := readWith(vendor, rules, raw, &p.in)
	if m != nil {
		p.in.MessageID, p.in.Subject, p.in.From = mailparse.Truncate(m.MessageID, 998), mailparse.Truncate(m.Subject, 500), mailparse.Truncate(m.From, 320)
	} else {
		p.in.MessageID = headerMessageID(raw)
	}
	if p.in.MessageID == "" {
		sum := sha256.Sum256(raw)
		p.in.Digest = hex.EncodeToString(sum[:])
	}
	if err != nil {
		p.unread = true
		p.in.Reason = mailparse.Truncate(err.Error(), 500)
		p.in.Size = int64(len(raw))
		return p
	}
	p.in.Status = statusOf(res.Status)
	p.in.DurationSeconds, p.in.SizeBytes = res.DurationSeconds, res.SizeBytes
	if !res.CompletedAt.IsZero() {
		p.in.CompletedAtMs = res.CompletedAt.UnixMilli()
	}
	if p.in.DurationSeconds > 604800 {
		p.in.DurationSeconds = -1 // the Report API's bound on a run
	}
	p.in.Summary = res.Summary
	p.in.Integrity = res.IntegrityFailed
	if suggest != nil && res.Summary != "" && (res.Status != mailparse.OK || res.IntegrityFailed) {
		if sg, ok := suggest(vendor, res.Summary); ok {
			p.in.AI = sg
		}
	}
	return p
}

func statusOf(st mailparse.Status) uint8 {
	switch st {
	case mailparse.OK:
		return engine.ReportOK
	case mailparse.Warn:
		return engine.ReportWarn
	case mailparse.Failed:
		return engine.ReportFailed
	}
	return 0
}

// deliver records the message for one recipient. An unreadable one is
// written to the mail store only once the engine's checks (Message-ID,
// the day's cap) let it in, and recorded then.
func (s *Server) deliver(rc recipient, p *parse, raw []byte) error {
	in := p.in // a copy: RawRef is the recipient's own
	r := s.eng.Mail(rc.token, &in)
	if r.Outcome == engine.MailNeedsRaw {
		ref, err := s.store.Put(raw)
		if err != nil {
			s.cfg.Logger.Error("keep unreadable e-mail", "err", err)
			s.observe(OutcomeFailed, rc.vendor)
			return errTryLate
		}
		in.RawRef = ref
		r = s.eng.Mail(rc.token, &in) // the checks again: another mail may have come meanwhile
		if r.Outcome != engine.MailKeptUnparsed {
			s.store.Remove([]string{ref}) // not listed: nothing refers to it
		}
	}
	if err := s.refusal(r); err != nil {
		return err
	}
	switch r.Outcome {
	case engine.MailDuplicate:
		s.observe(OutcomeDuplicate, rc.vendor)
	case engine.MailKeptUnparsed:
		s.observe(OutcomeUnparsed, rc.vendor)
	default:
		s.observe(OutcomeRecorded, rc.vendor)
	}
	return nil
}

// headerMessageID finds the Message-ID of a message whose header could not
// be read as a whole.
func headerMessageID(raw []byte) string {
	end := bytes.Index(raw, []byte("\r\n\r\n"))
	if end < 0 {
		end = min(len(raw), 64<<10)
	}
	for line := range strings.SplitSeq(string(raw[:end]), "\n") {
		if len(line) > 11 && strings.EqualFold(line[:11], "message-id:") {
			return mailparse.Truncate(strings.Trim(strings.TrimSpace(line[11:]), "<>"), 998)
		}
	}
	return ""
}

// Reparse reads an unparsed e-mail again with its job's parser (the
// current one: the parser or the job's vendor may have been fixed). It
// returns the engine's reply, or a *mailparse.UnreadableError when the
// e-mail still cannot be read, or the engine's error. The admin API calls
// it, whether or not --smtp-listen is on.
func Reparse(eng *engine.Engine, store RawStore, suggest func(vendor, text string) (engine.Suggestion, bool), wsID, id string) (engine.MailReply, error) {
	ref, err := eng.UnparsedMail(wsID, id)
	if err != nil {
		return engine.MailReply{}, err
	}
	raw, err := store.Get(ref.RawRef)
	if err != nil {
		return engine.MailReply{}, err
	}
	p := readMail(suggest, ref.Vendor, ref.Rules, raw)
	if p.unread {
		return engine.MailReply{}, &mailparse.UnreadableError{Reason: p.in.Reason}
	}
	return eng.Reparsed(wsID, id, &p.in)
}

// slogAdapter lets go-smtp log through slog. go-smtp logs a line for each
// session that ends on an error (a connection reset, a failed TLS
// handshake), which any client can cause as fast as it connects: one line
// per 10 seconds goes through, with the number not logged since.
type slogAdapter struct {
	l    *slog.Logger
	rate connlimit.RateLog
}

func (a *slogAdapter) Printf(format string, v ...any) {
	a.log(strings.TrimSpace(fmt.Sprintf(format, v...)))
}

func (a *slogAdapter) Println(v ...any) {
	a.log(strings.TrimSpace(fmt.Sprintln(v...)))
}

func (a *slogAdapter) log(line string) {
	if more, ok := a.rate.Allow(); ok {
		a.l.Warn("smtp", "msg", line, "more_since_last_log", more)
	}
}
