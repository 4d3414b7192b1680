package engine

import (
	"backupmon/state"
)

// Commands of report e-mails: a recipient's check, an e-mail recorded as a
// report or kept unparsed, re-reads, drops and ingest address rotation.

// DefaultIngestDomain is the domain of ingest addresses unless
// Options.IngestDomain says otherwise (decisions.md 10).
const DefaultIngestDomain = "ingest.localhost"

// Suggestion is a likely cause for an alert's text, as the rule catalogue
// found it; the zero value is none.
type Suggestion struct {
	Cause, Confidence, Category string
}

// MailInput is one report e-mail as the mail listener read it. A zero
// Status means the e-mail is unreadable: Reason says why, and RawRef names
// the raw message in the mail store.
type MailInput struct {
	MessageID string // without angle brackets; "" when none
	// Digest is the hex SHA-256 of the raw message: the idempotency key of
	// a mail without Message-ID (a sender's retry sends the same bytes).
	Digest          string
	Status          uint8  // ReportOK, ReportWarn, ReportFailed; 0: unreadable
	CompletedAtMs   int64  // the run's end; 0: not stated
	DurationSeconds int64  // -1: not stated
	SizeBytes       int64  // -1: not stated
	Summary         string // the first error or warning text, at most 500 characters
	Integrity       bool   // a verification or integrity check failed
	AI              Suggestion

	Reason, Subject, From, RawRef string // unreadable e-mails only
	Size                          int64

	// A parsing rule's reading: Rule names it; with RouteByName the report
	// is recorded for the workspace's job named JobName (routeMail).
	Rule, JobName string
	RouteByName   bool
}

// MailOutcome is what became of an e-mail for one recipient.
type MailOutcome uint8

// Mail outcomes and the SMTP answers they map to.
const (
	MailAccepted         MailOutcome = iota // 250: recorded (or, for a recipient check, acceptable)
	MailDuplicate                           // 250: its Message-ID was already recorded for the job
	MailKeptUnparsed                        // 250: unreadable, kept in the unparsed list
	MailUnknownRecipient                    // 550 5.1.1
	MailInactive                            // 550 5.7.1: the workspace is suspended, cancelled or its trial ended
	MailCapReached                          // 452 4.2.2: the job's daily cap
	MailInFlight                            // 451 4.3.0: the same Message-ID is being recorded right now
	MailNotRecorded                         // 451 4.3.0: the log failed or the engine is closing
	// MailNeedsRaw: an unreadable e-mail (no RawRef yet) passed the checks
	// and would be listed; nothing was recorded. Keep its raw message and
	// call Mail again with RawRef, so that only e-mails past the checks
	// are written to disk.
	MailNeedsRaw
)

// MailReply is the engine's answer about one recipient of an e-mail.
type MailReply struct {
	Outcome    MailOutcome
	Vendor     string // the job's vendor: which parser reads its e-mails
	Status     uint8  // the report's status, for MailAccepted and MailDuplicate
	RetryAfter int64  // seconds, for MailCapReached
	ResultID   state.ID
	AlertID    state.ID
	Superseded bool
	// Rules are the workspace's parsing rules, for an accepted recipient
	// (nil: none).
	Rules *MailRules `json:",omitempty"`
}

// IngestDomain returns the domain of the engine's ingest addresses.
func (e *Engine) IngestDomain() string { return e.opts.IngestDomain }

// mailTarget finds the job of an ingest token in its actor: nil when the
// token is unknown or retired.
func mailTarget(w *workspace, ref *ingestRef, token string) *state.Job {
	j := w.Jobs[ref.jobID]
	if j == nil || j.IngestToken != token {
		return nil
	}
	return j
}

// capRetry returns the seconds until the job's daily cap lets a report in,
// or 0 when it does now.
func capRetry(j *state.Job, now int64) int64 {
	if n := len(j.Results); n >= reportsPerJobPerDay {
		if oldest := j.Results[n-reportsPerJobPerDay].ReceivedAt; oldest > now-state.MsPerDay {
			return ceilSeconds(oldest + state.MsPerDay - now)
		}
	}
	return 0
}

// MailRecipient checks one recipient of an e-mail before its data comes:
// MailUnknownRecipient for a token that names no job (or a retired one),
// MailInactive, MailCapReached with RetryAfter, else MailAccepted with the
// job's vendor. It changes nothing.
func (e *Engine) MailRecipient(token string) MailReply {
	ref := e.ingest.get(token)
	if ref == nil || ref.act == nil {
		return MailReply{Outcome: MailUnknownRecipient}
	}
	if e.closed.Load() {
		return MailReply{Outcome: MailNotRecorded}
	}
	r, ok := askOK(ref.act, func(w *workspace) MailReply {
		j := mailTarget(w, ref, token)
		now := e.nowMs()
		switch {
		case j == nil:
			return MailReply{Outcome: MailUnknownRecipient}
		case !w.Active(now):
			return MailReply{Outcome: MailInactive, Vendor: j.Vendor}
		}
		if s := capRetry(j, now); s > 0 {
			return MailReply{Outcome: MailCapReached, Vendor: j.Vendor, RetryAfter: s}
		}
		return MailReply{Outcome: MailAccepted, Vendor: j.Vendor, Rules: w.mailRules()}
	})
	if !ok {
		return MailReply{Outcome: MailNotRecorded}
	}
	return r
}

// askOK is ask with a flag saying whether the actor answered.
func askOK[T any](a *actor, fn func(w *workspace) T) (T, bool) {
	type answer struct{ v T }
	p := ask(a, func(w *workspace) *answer { return &answer{fn(w)} })
	if p == nil {
		var zero T
		return zero, false
	}
	return p.v, true
}

// Mail records one e-mail to an ingest address and answers once it is
// durable: a report when in.Status is set, else an unparsed entry. The
// checks are the recipient's (unknown, inactive, cap), then the Message-ID
// (MailDuplicate, or MailInFlight while the same one is being recorded).
// An unreadable e-mail without RawRef that passes them is answered
// MailNeedsRaw, unrecorded.
func (e *Engine) Mail(token string, in *MailInput) MailReply {
	ref := e.ingest.get(token)
	if ref == nil || ref.act == nil {
		return MailReply{Outcome: MailUnknownRecipient}
	}
	if e.closed.Load() {
		return MailReply{Outcome: MailNotRecorded}
	}
	ch := make(chan MailReply, 1)
	a := ref.act
	if !a.send(func(w *workspace) {
		now := e.nowMs()
		j := mailTarget(w, ref, token)
		switch {
		case j == nil:
			ch <- MailReply{Outcome: MailUnknownRecipient}
			return
		case !w.Active(now):
			ch <- MailReply{Outcome: MailInactive, Vendor: j.Vendor}
			return
		}
		j = w.routeMail(j, in)
		if in.Status == 0 {
			a.mailUnparsed(w, j, in, now, ch)
			return
		}
		a.mailReport(w, j, in, now, state.ID{}, ch)
	}) {
		return MailReply{Outcome: MailNotRecorded}
	}
	return <-ch
}

// mailKey returns the idempotency key of a mail: its Message-ID, else the
// digest of its bytes ("" when it has neither).
func mailKey(messageID, digest string) string {
	switch {
	case messageID != "":
		if len(messageID) > state.MaxMailKey {
			messageID = messageID[:state.MaxMailKey]
		}
		return state.MailIdemPrefix + messageID
	case digest != "":
		return state.MailIdemPrefix + "sha256:" + digest
	}
	return ""
}

// mailReport runs in the actor: the Message-ID and cap checks, then the
// report record. unparsedID names the unparsed entry a re-read turns into
// this report (zero for a new e-mail).
func (a *actor) mailReport(w *workspace, j *state.Job, in *MailInput, now int64, unparsedID state.ID, reply chan<- MailReply) {
	key := mailKey(in.MessageID, in.Digest)
	var idem state.IdemDigest
	if key != "" {
		idem = state.IdemDigestOf(j.ID, key)
		if ent := w.Idem.Get(idem); ent != nil && now-ent.At < state.IdemKeepMs {
			if ent.Pending.Load() {
				reply <- MailReply{Outcome: MailInFlight, Vendor: j.Vendor}
				return
			}
			if !unparsedID.IsZero() {
				a.dropUnparsed(w, unparsedID, now, MailReply{Outcome: MailDuplicate, Vendor: j.Vendor, Status: in.Status}, reply)
				return
			}
			reply <- MailReply{Outcome: MailDuplicate, Vendor: j.Vendor, Status: in.Status}
			return
		}
	}
	if s := capRetry(j, now); s > 0 {
		reply <- MailReply{Outcome: MailCapReached, Vendor: j.Vendor, RetryAfter: s}
		return
	}
	rec := w.decideMail(j, in, key, now)
	rec.UnparsedID = unparsedID
	if key != "" {
		rec.Digested(idem)
	}
	if err := a.applyNew(rec); err != nil {
		a.eng.logger.Error("apply mail report", "workspace", w.ID, "job", j.ID, "err", err)
		reply <- MailReply{Outcome: MailNotRecorded}
		return
	}
	ent := rec.Entry()
	if ent != nil {
		ent.Pending.Store(true)
	}
	ans := MailReply{Outcome: MailAccepted, Vendor: j.Vendor, Status: in.Status, ResultID: rec.ResultID, AlertID: rec.AlertID, Superseded: rec.Superseded}
	notices := a.takeFresh(now)
	dropped := w.TakeDropped()
	a.eng.submit(rec, func(_ uint64, err error) {
		if ent != nil {
			ent.Pending.Store(false)
		}
		if err != nil {
			reply <- MailReply{Outcome: MailNotRecorded}
			return
		}
		a.eng.deliverAll(notices)
		a.eng.dropRaw(dropped)
		reply <- ans
	})
	a.askAI(w, j, rec, in, now) // logged after the report, never waited for
}

// decideMail builds the record of an accepted report e-mail: the Report
// API's rules for times, superseded reports and alerts, with the mail's own
// text as the alert summary, the suggestion for it, and an integrity alert
// when a verification failed (decisions.md 10).
func (w *workspace) decideMail(j *state.Job, in *MailInput, key string, now int64) *state.Report {
	rec := w.decideReport(j, &ReportInput{
		Status: in.Status, DurationSeconds: in.DurationSeconds, SizeBytes: in.SizeBytes,
		TimestampMs: in.CompletedAtMs, IdempotencyKey: key,
	}, now, "email:"+j.Vendor)
	if rec.Superseded || !j.Monitored(now) {
		return rec
	}
	summary := in.Summary
	switch {
	case in.Integrity:
		if state.ID(rec.AlertID).IsZero() {
			rec.AlertID = w.alertIDFor(j, now)
		}
		rec.AlertType = state.AlertIntegrity
		if summary == "" {
			summary = "Backup verification failed (reported by e-mail)"
		}
	case in.Status == ReportFailed:
		if summary == "" {
			summary = "Backup failed (reported by e-mail)"
		}
	case in.Status == ReportWarn:
		if summary == "" {
			summary = "Backup completed with warnings (reported by e-mail)"
		}
	}
	if state.ID(rec.AlertID).IsZero() {
		return rec
	}
	rec.Summary = summary
	if in.Summary != "" && in.AI.Cause != "" {
		rec.AICause, rec.AIConfidence, rec.AICategory = in.AI.Cause, in.AI.Confidence, in.AI.Category
	}
	return rec
}

// mailUnparsed runs in the actor: an unreadable e-mail joins the unparsed
// list, unless the job already has it (same Message-ID) or has had its
// day's worth of them.
func (a *actor) mailUnparsed(w *workspace, j *state.Job, in *MailInput, now int64, reply chan<- MailReply) {
	n := 0
	for _, u := range w.Unparsed {
		if u.JobID != j.ID {
			continue
		}
		if in.MessageID != "" && u.MessageID == in.MessageID || in.MessageID == "" && in.Digest != "" && u.Digest == in.Digest {
			// Listed already, but perhaps not yet durable: answer once
			// everything logged so far is.
			a.eng.submit(nil, func(_ uint64, err error) {
				if err != nil {
					reply <- MailReply{Outcome: MailNotRecorded}
					return
				}
				reply <- MailReply{Outcome: MailDuplicate, Vendor: j.Vendor}
			})
			return
		}
		if u.ReceivedAt > now-state.MsPerDay {
			n++
		}
	}
	if n >= state.UnparsedPerJobPerDay {
		reply <- MailReply{Outcome: MailCapReached, Vendor: j.Vendor, RetryAfter: 3600}
		return
	}
	if in.RawRef == "" {
		reply <- MailReply{Outcome: MailNeedsRaw, Vendor: j.Vendor}
		return
	}
	rec := &state.MailUnparsed{UnparsedMail: state.UnparsedMail{
		ID: w.IDs.Next(now), JobID: j.ID, ReceivedAt: now,
		MessageID: in.MessageID, Digest: in.Digest, Subject: in.Subject, From: in.From,
		Reason: in.Reason, Vendor: j.Vendor, RawRef: in.RawRef, Size: in.Size,
	}}
	a.commitMail(w, rec, MailReply{Outcome: MailKeptUnparsed, Vendor: j.Vendor}, reply)
}

// commitMail applies rec and answers ans once it is durable.
func (a *actor) commitMail(w *workspace, rec state.Record, ans MailReply, reply chan<- MailReply) {
	if err := a.applyNew(rec); err != nil {
		a.eng.logger.Error("apply mail record", "workspace", w.ID, "type", rec.Type(), "err", err)
		reply <- MailReply{Outcome: MailNotRecorded}
		return
	}
	dropped := w.TakeDropped()
	a.eng.submit(rec, func(_ uint64, err error) {
		if err != nil {
			reply <- MailReply{Outcome: MailNotRecorded}
			return
		}
		a.eng.dropRaw(dropped)
		reply <- ans
	})
}

// dropUnparsed records that an unparsed entry leaves the list.
func (a *actor) dropUnparsed(w *workspace, id state.ID, now int64, ans MailReply, reply chan<- MailReply) {
	a.commitMail(w, &state.UnparsedGone{Mark: state.Mark{ID: id, At: now}}, ans, reply)
}

// dropRaw tells the mail store which raw messages are no longer kept.
func (e *Engine) dropRaw(refs []string) {
	if len(refs) == 0 || e.opts.RawDropped == nil {
		return
	}
	go e.opts.RawDropped(refs)
}

// Reparsed records an unparsed e-mail that now reads as a report (in, with
// Status set): the report as if the e-mail arrived now, and the entry
// leaves the list in the same record. A Message-ID the job already recorded
// makes it MailDuplicate and only removes the entry. Errors: KindNotFound
// for an unknown workspace or entry, KindConflict when the job is at its
// daily cap or the workspace is inactive.
func (e *Engine) Reparsed(wsID, id string, in *MailInput) (MailReply, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return MailReply{}, err
	}
	if e.closed.Load() {
		return MailReply{}, ErrClosed
	}
	// The actor answers a refusal of its own on refused, or hands the
	// report to mailReport, which answers on replies once it is durable.
	refused := make(chan error, 1)
	replies := make(chan MailReply, 1)
	if !a.send(func(w *workspace) {
		now := e.nowMs()
		u := w.UnparsedByID(id)
		if u == nil {
			refused <- notFound("unparsed e-mail")
			return
		}
		j := w.Jobs[u.JobID]
		if j == nil {
			refused <- notFound("job")
			return
		}
		if !w.Active(now) {
			refused <- conflict("the workspace is not active: its e-mails are not recorded")
			return
		}
		in.MessageID, in.Digest = u.MessageID, u.Digest
		if j = w.routeMail(j, in); in.Status == 0 {
			refused <- conflict("the e-mail still cannot be read: %s", in.Reason)
			return
		}
		a.mailReport(w, j, in, now, u.ID, replies)
	}) {
		return MailReply{}, ErrClosed
	}
	select {
	case err := <-refused:
		return MailReply{}, err
	case r := <-replies:
		switch r.Outcome {
		case MailCapReached:
			return MailReply{}, conflict("Daily ingest cap (100 reports/job) reached — try again after the trailing 24h window rolls over")
		case MailInFlight:
			return MailReply{}, conflict("an e-mail with this Message-ID is being recorded right now; try again shortly")
		case MailNotRecorded:
			return MailReply{}, ErrFailed
		}
		return r, nil
	}
}

// DropUnparsed removes an unparsed e-mail from the list (and lets the mail
// store delete its raw message). KindNotFound for an unknown entry.
func (e *Engine) DropUnparsed(wsID, id string) error {
	_, err := command(e, wsID, func(w *workspace, now int64) (decision[struct{}], error) {
		u := w.UnparsedByID(id)
		if u == nil {
			return decision[struct{}]{}, notFound("unparsed e-mail")
		}
		return decision[struct{}]{rec: &state.UnparsedGone{Mark: state.Mark{ID: u.ID, At: now}}}, nil
	})
	return err
}

// RotateIngestAddress gives a job a new ingest address and retires the old
// one, which answers 550 from now on. It returns the admin job view.
func (e *Engine) RotateIngestAddress(wsID, jobID string) (JobView, error) {
	return command(e, wsID, func(w *workspace, now int64) (decision[JobView], error) {
		j := w.Job(jobID)
		if j == nil {
			return decision[JobView]{}, notFound("job")
		}
		rec := &state.IngestRotated{JobID: j.ID, ActivityID: w.IDs.Next(now), Token: e.newIngestToken(), At: now}
		return decision[JobView]{rec: rec, answer: func(w *workspace) JobView { return e.adminJobView(w, j, now) }}, nil
	})
}
