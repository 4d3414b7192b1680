package engine

import (
	"errors"
	"sync"
	"time"

	"backupmon/state"
)

// The Report API's command, and the import of past results.

// Report API limits (api.md 8.3, decisions.md 3).
const (
	reportsPerKeyPerMinute = 60
	reportsPerJobPerDay    = state.ReportsPerJobPerDay
	idemRetryAfterMs       = 60 * state.MsPerSecond
	timestampFutureMs      = 5 * state.MsPerMinute
	timestampPastMs        = 30 * state.MsPerDay
	inFlightRetrySeconds   = 30
)

// ReportStatus values a report can carry.
const (
	ReportOK     = state.ResultOK
	ReportWarn   = state.ResultWarning
	ReportFailed = state.ResultFailed
)

// ReportInput is one Report API request as the transport read it. The
// transport parses the body before asking, but the engine decides when a bad
// body is reported, since the contract checks the job first.
type ReportInput struct {
	JobID           string
	BadBody         bool  // the body failed to parse; the transport knows why
	Status          uint8 // ReportOK, ReportWarn or ReportFailed
	SizeBytes       int64 // -1: none (0 is not recorded)
	DurationSeconds int64 // -1: none
	TimestampMs     int64 // 0: none or unreadable
	TimestampLocal  bool  // TimestampMs is a wall-clock time (as if UTC) in the workspace's zone
	IdempotencyKey  string
}

// ReportOutcome is what became of a report, in the contract's check order.
type ReportOutcome uint8

// Report outcomes.
const (
	ReportRecorded          ReportOutcome = iota // 200
	ReportDuplicate                              // 200, duplicate: true
	ReportInvalidKey                             // 401 Invalid API key
	ReportKeyExpired                             // 401 API key has expired
	ReportWrongKeyType                           // 403 API key cannot use the Report API
	ReportWorkspaceInactive                      // 403 Workspace suspended
	ReportRateLimited                            // 429 per-key minute limit
	ReportJobNotFound                            // 404
	ReportBadBody                                // 400/413, as the transport found
	ReportInFlight                               // 503, Retry-After 30
	ReportCapReached                             // 429 daily cap
	ReportNotRecorded                            // 500: the log failed
	ReportUnavailable                            // 503: the engine is read-only (its log failed its checks)
)

// ReportReply is the engine's answer to a report.
type ReportReply struct {
	Outcome    ReportOutcome
	AlertID    state.ID // alert opened or raised; zero when none
	Superseded bool
	RetryAfter int64 // seconds, for ReportRateLimited, ReportCapReached, ReportInFlight
}

// reportCall is one report on its way through the engine: the request,
// the actor's work, its record and the log's acknowledgement. Calls are
// pooled, with their reply channel and the two functions bound to them
// once, so a report allocates no closure for the actor or the log, and no
// record: the log reads a record only before it calls done.
type reportCall struct {
	act     *actor
	key     *state.Key
	in      ReportInput
	reply   chan ReportReply
	ans     ReportReply         // the answer once durable
	rec     state.Report        // its record, until the log has it
	entry   *state.IdemEntry    // the idempotency entry to clear once durable
	notices []state.Notice      // to deliver once durable
	run     func(*workspace)    // c.decide, for the actor
	durable func(uint64, error) // c.done, for the log
}

var reportCalls = sync.Pool{New: func() any {
	c := &reportCall{reply: make(chan ReportReply, 1)}
	c.run, c.durable = c.decide, c.done
	return c
}}

// Report records one Report API request sent with the key whose SHA-256 is
// keyHash, and answers once the result is durable (or refused). Once the
// engine is closed it answers ReportNotRecorded. It keeps nothing of in.
func (e *Engine) Report(keyHash [32]byte, in *ReportInput) ReportReply {
	ref := e.keys.get(&keyHash)
	if ref == nil {
		return ReportReply{Outcome: ReportInvalidKey}
	}
	if e.closed.Load() {
		return ReportReply{Outcome: ReportNotRecorded}
	}
	c := reportCalls.Get().(*reportCall)
	c.act, c.key, c.in = ref.act, ref.key, *in
	if !ref.act.send(c.run) {
		c.release() // never handed out
		return ReportReply{Outcome: ReportNotRecorded}
	}
	r := <-c.reply
	c.release()
	return r
}

// release clears c and puts it back in the pool.
func (c *reportCall) release() {
	reply, run, durable := c.reply, c.run, c.durable
	*c = reportCall{reply: reply, run: run, durable: durable}
	reportCalls.Put(c)
}

// decide runs in the actor: every check of the contract in its order,
// then the record, handed to the log.
func (c *reportCall) decide(w *workspace) {
	a, k, in := c.act, c.key, &c.in
	now := a.eng.nowMs()
	switch {
	case k.Revoked:
		c.reply <- ReportReply{Outcome: ReportInvalidKey}
		return
	case k.ExpiresAt != 0 && now >= k.ExpiresAt:
		c.reply <- ReportReply{Outcome: ReportKeyExpired}
		return
	case k.Type != "report":
		c.reply <- ReportReply{Outcome: ReportWrongKeyType}
		return
	}
	k.LastUsed.Store(now)
	if !w.Active(now) {
		c.reply <- ReportReply{Outcome: ReportWorkspaceInactive}
		return
	}
	minute := now / state.MsPerMinute
	if k.Minute != minute {
		k.Minute, k.MinuteCount = minute, 0
	}
	if k.MinuteCount >= reportsPerKeyPerMinute {
		c.reply <- ReportReply{Outcome: ReportRateLimited, RetryAfter: ceilSeconds((minute+1)*state.MsPerMinute - now)}
		return
	}
	k.MinuteCount++
	j := w.Job(in.JobID)
	if j == nil {
		c.reply <- ReportReply{Outcome: ReportJobNotFound}
		return
	}
	if in.BadBody {
		c.reply <- ReportReply{Outcome: ReportBadBody}
		return
	}
	var idem state.IdemDigest
	if in.IdempotencyKey != "" {
		idem = state.IdemDigestOf(j.ID, in.IdempotencyKey)
		if ent := w.Idem.Get(idem); ent != nil && now-ent.At < state.IdemKeepMs {
			if !ent.Pending.Load() {
				c.reply <- ReportReply{Outcome: ReportDuplicate}
				return
			}
			if now-ent.At <= idemRetryAfterMs {
				c.reply <- ReportReply{Outcome: ReportInFlight, RetryAfter: inFlightRetrySeconds}
				return
			}
			// Started more than 60 seconds ago and never finished:
			// process it again (api.md 4.3 rule 4).
		}
	}
	if n := len(j.Results); n >= reportsPerJobPerDay {
		oldest := j.Results[n-reportsPerJobPerDay].ReceivedAt
		if oldest > now-state.MsPerDay {
			c.reply <- ReportReply{Outcome: ReportCapReached, RetryAfter: ceilSeconds(oldest + state.MsPerDay - now)}
			return
		}
	}
	rec := &c.rec
	w.decideReportIn(rec, j, in, now, k.Source)
	rec.SentWith(k)
	if in.IdempotencyKey != "" {
		rec.Digested(idem)
	}
	if err := a.applyNew(rec); err != nil {
		if errors.Is(err, ErrReadOnly) {
			c.reply <- ReportReply{Outcome: ReportUnavailable}
			return
		}
		a.eng.logger.Error("apply report", "workspace", w.ID, "job", j.ID, "err", err)
		c.reply <- ReportReply{Outcome: ReportNotRecorded}
		return
	}
	if c.entry = rec.Entry(); c.entry != nil {
		c.entry.Pending.Store(true)
	}
	c.ans = ReportReply{Outcome: ReportRecorded, AlertID: rec.AlertID, Superseded: rec.Superseded}
	c.notices = a.takeFresh(now)
	a.eng.submit(rec, c.durable)
}

// done is the log's acknowledgement of the call's record: it answers.
func (c *reportCall) done(_ uint64, err error) {
	if err != nil {
		c.reply <- ReportReply{Outcome: ReportNotRecorded}
		return
	}
	if c.notices != nil {
		c.act.eng.deliverAll(c.notices)
	}
	if c.entry != nil {
		c.entry.Pending.Store(false)
	}
	c.reply <- c.ans
}

// decideReport builds the record of an accepted report: its times, whether
// it is superseded, and the alert it opens or raises.
func (w *workspace) decideReport(j *state.Job, in *ReportInput, now int64, source string) *state.Report {
	rec := new(state.Report)
	w.decideReportIn(rec, j, in, now, source)
	return rec
}

// decideReportIn is decideReport writing into rec (a pooled call's).
func (w *workspace) decideReportIn(rec *state.Report, j *state.Job, in *ReportInput, now int64, source string) {
	completed := now
	ts := in.TimestampMs
	if ts != 0 && in.TimestampLocal {
		t := state.MsTime(ts)
		ts = state.LocalTime(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), w.Loc).UnixMilli()
	}
	if ts != 0 && ts <= now+timestampFutureMs && ts >= now-timestampPastMs {
		completed = ts
	}
	*rec = state.Report{
		JobID: j.ID, ResultID: w.IDs.Next(now), Status: in.Status,
		ReceivedAt: now, CompletedAt: completed,
		DurationSeconds: in.DurationSeconds, SizeBytes: in.SizeBytes,
		IdempotencyKey: in.IdempotencyKey, Source: source,
	}
	if rec.SizeBytes == 0 {
		rec.SizeBytes = -1
	}
	rec.Superseded = j.LastReportAt != 0 && completed <= j.LastReportAt
	if !rec.Superseded && in.Status != state.ResultOK && j.Monitored(now) {
		rec.AlertID = w.alertIDFor(j, now)
		if in.Status == state.ResultFailed {
			rec.AlertType = state.AlertFailed
			rec.Summary = "Backup failed (reported through the Report API)"
		} else {
			rec.AlertType = state.AlertWarning
			rec.Summary = "Backup completed with warnings (reported through the Report API)"
		}
	}
}

// alertIDFor returns the id of the alert a new problem of j opens or
// raises: its unresolved alert's, else a new one.
func (w *workspace) alertIDFor(j *state.Job, now int64) state.ID {
	if j.Alert != nil {
		return j.Alert.ID
	}
	return w.IDs.Next(now)
}

func ceilSeconds(ms int64) int64 {
	if ms <= 0 {
		return 1
	}
	return (ms + state.MsPerSecond - 1) / state.MsPerSecond
}

// ImportInput is a past backup result brought in by the demo or a bulk
// import: it is decided like a Report API report received at ReceivedAt.
type ImportInput struct {
	ReceivedAt      time.Time
	Status          uint8
	DurationSeconds int64 // -1 or 0..604800
	SizeBytes       int64 // -1 or 0 for none
	Source          string
}

// ImportReport records one past result; see ImportReports.
func (e *Engine) ImportReport(wsID, jobID string, in ImportInput) error {
	return e.ImportReports(wsID, jobID, []ImportInput{in})
}

// ImportReports records past results of one job, oldest first, as if each
// had been received at its ReceivedAt, with the same rules (superseded,
// alerts, recovery) as live reports but none of the request limits. All are
// decided in one actor turn and the call returns once the last is durable.
// The job's timers run after the call, at the current time: a job's history
// belongs in one call, or the gaps between calls read as missed due times.
// It returns ErrFailed when the log fails, ErrClosed once the engine is
// closed, and a KindNotFound error for an unknown workspace or job.
func (e *Engine) ImportReports(wsID, jobID string, list []ImportInput) error {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return err
	}
	for _, in := range list {
		if in.Status < ReportOK || in.Status > ReportFailed {
			return invalid("status", "status must be ok, warn or failed")
		}
	}
	if e.closed.Load() {
		return ErrClosed
	}
	ch := make(chan error, 1)
	sent := a.send(func(w *workspace) {
		j := w.Job(jobID)
		if j == nil {
			ch <- notFound("job")
			return
		}
		var last state.Record
		var notices []state.Notice
		for _, in := range list {
			at := in.ReceivedAt.UnixMilli()
			rec := w.decideReport(j, &ReportInput{Status: in.Status, DurationSeconds: in.DurationSeconds, SizeBytes: in.SizeBytes}, at, in.Source)
			if err := a.applyNew(rec); err != nil {
				ch <- err
				return
			}
			notices = append(notices, a.takeFresh(e.nowMs())...)
			if last != nil {
				e.submit(last, func(uint64, error) {})
			}
			last = rec
		}
		if last == nil {
			ch <- nil
			return
		}
		e.submit(last, func(_ uint64, err error) {
			if err != nil {
				err = ErrFailed
			} else {
				e.deliverAll(notices)
			}
			ch <- err
		})
	})
	if !sent {
		return ErrClosed
	}
	return <-ch
}
