package state

import (
	"fmt"

	"backupmon/codec"
)

// The record of a backup result.

// TypeReport is the record type number of Report.
const TypeReport byte = 11

// Report records one accepted backup result and what it did: whether it was
// superseded and which alert (if any) it opened or raised.
type Report struct {
	Header
	JobID, ResultID         ID
	Status                  uint8 // 1 ok, 2 warning, 3 failed
	ReceivedAt, CompletedAt int64
	DurationSeconds         int64 // -1: none
	SizeBytes               int64 // -1: none
	IdempotencyKey          string
	Source                  string
	Superseded              bool
	AlertID                 ID // zero: no alert opened or raised
	AlertType               uint8
	Summary                 string
	// A report e-mail's extras, written after a flag byte only when one is
	// set: the suggestion for the alert's text,
	// and the unparsed e-mail a successful re-read turns into this report.
	AICause, AIConfidence, AICategory string
	UnparsedID                        ID

	entry  *IdemEntry // the idempotency entry apply made (not logged)
	key    *Key       // the key the report was sent with, if known (not logged)
	idem   IdemDigest // the digest of IdempotencyKey, if idemOK (not logged)
	idemOK bool
}

// Digested tells apply the digest of r's idempotency key, which the
// caller's check computed already (IdemDigestOf of r's job and key).
func (r *Report) Digested(d IdemDigest) { r.idem, r.idemOK = d, true }

// SentWith tells apply which key r was sent with, so that it finds the
// index of r's source on the key rather than in the workspace's map.
func (r *Report) SentWith(k *Key) { r.key = k }

// Entry returns the idempotency entry applying r made, or nil (no key, or
// not applied).
func (r *Report) Entry() *IdemEntry { return r.entry }

func (r *Report) fields(f *codec.Fields) {
	f.Walk(r.JobID[:], r.ResultID[:], &r.Status, &r.ReceivedAt, &r.CompletedAt, &r.DurationSeconds, &r.SizeBytes,
		&r.IdempotencyKey, &r.Source, &r.Superseded, r.AlertID[:], &r.AlertType, &r.Summary)
	extras := r.AICause != "" || r.AIConfidence != "" || r.AICategory != "" || !r.UnparsedID.IsZero()
	f.Bool(&extras)
	if extras {
		f.Walk(&r.AICause, &r.AIConfidence, &r.AICategory, r.UnparsedID[:])
	}
}

func (r *Report) apply(w *Workspace) error {
	j := w.Jobs[r.JobID]
	if j == nil {
		return fmt.Errorf("report for unknown job %s", r.JobID)
	}
	j.jsonUntil = 0
	res := Result{
		ID: r.ResultID, ReceivedAt: r.ReceivedAt, CompletedAt: r.CompletedAt,
		SizeBytes: r.SizeBytes, Duration: int32(r.DurationSeconds), Status: r.Status,
		Source: w.reportSource(r),
	}
	if i, appended := j.insertResult(res); appended {
		w.Results.insert(j, j.resultBase+uint32(i))
	} else {
		w.Results.insertShifted(j, j.resultBase+uint32(i))
	}
	w.IDs.Observe(r.ResultID)
	if r.IdempotencyKey != "" {
		if !r.idemOK {
			r.idem = IdemDigestOf(j.ID, r.IdempotencyKey)
		}
		r.entry = w.Idem.Put(r.idem, r.ReceivedAt)
	}
	if !r.UnparsedID.IsZero() {
		w.removeUnparsed(r.UnparsedID) // a re-read e-mail leaves the unparsed list
	}
	if r.Superseded {
		return nil
	}
	w.JobIdx.setLast(j, r.Status)
	w.JobIdx.Touch(j)
	j.LastReportAt = r.CompletedAt
	j.LastReceivedAt = r.ReceivedAt
	j.LastReportSeq = r.Seq
	j.DueBase = r.ReceivedAt // a report sets the due time (decisions.md 4.4)
	switch r.Status {
	case ResultOK:
		j.LastSuccessAt = r.CompletedAt
		j.FailureStreak = 0
		// An ok report resolves the unresolved alert, unless it comes with
		// an alert of its own (a failed verification: decisions.md 10).
		if a := j.Alert; a != nil && r.AlertID.IsZero() {
			w.resolveAlert(a, r.ReceivedAt)
			if j.Monitored(r.ReceivedAt) {
				w.emit(a, EventResolved, r.ReceivedAt, nil) // the recovery notice
			}
		}
	case ResultWarning:
		j.FailureStreak = 0
	case ResultFailed:
		j.LastFailureAt = r.CompletedAt
		j.FailureStreak++
	}
	if !r.AlertID.IsZero() {
		w.raiseAlert(j, r.AlertID, r.AlertType, r.Summary, aiOf(r), r.ReceivedAt)
	} else if r.Status == ResultOK {
		w.noteSizeDrop(j, r.ResultID, r.ReceivedAt)
	}
	return nil
}
