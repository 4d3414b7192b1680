package state

import (
	"backupmon/codec"
	"backupmon/jsonx"
	"slices"
	"strings"
)

// UnparsedMail is a report e-mail whose status could not be read: an entry
// of the workspace's unparsed list, the body of its MailUnparsed record.
type UnparsedMail struct {
	ID, JobID              ID
	ReceivedAt             int64
	MessageID, Digest      string
	Subject, From          string
	Reason, Vendor, RawRef string
	Size                   int64
}

// fields walks the entry, in its record and in snapshots.
func (u *UnparsedMail) fields(f *codec.Fields) {
	f.Walk(u.ID[:], u.JobID[:], &u.ReceivedAt, &u.MessageID, &u.Digest, &u.Subject, &u.From, &u.Reason, &u.Vendor, &u.RawRef, &u.Size)
}

// aiNote is the catalogue's suggestion on an alert (decisions.md 4.6).
type aiNote struct {
	Cause, Confidence, Category string
}

// takeDropped returns the raw messages that records applied since the last
// call let go of.
func (w *Workspace) TakeDropped() []string {
	d := w.droppedRaw
	w.droppedRaw = nil
	return d
}

// removeUnparsed takes an entry off the list; it reports whether it was there.
func (w *Workspace) removeUnparsed(id ID) bool {
	for i, u := range w.Unparsed {
		if u.ID == id {
			w.droppedRaw = append(w.droppedRaw, u.RawRef)
			w.Unparsed = slices.Delete(w.Unparsed, i, i+1)
			return true
		}
	}
	return false
}

// removeJobUnparsed takes a deleted job's entries off the list.
func (w *Workspace) removeJobUnparsed(jobID ID) {
	w.Unparsed = slices.DeleteFunc(w.Unparsed, func(u *UnparsedMail) bool {
		if u.JobID == jobID {
			w.droppedRaw = append(w.droppedRaw, u.RawRef)
			return true
		}
		return false
	})
}

// pruneUnparsed drops entries received before cut.
func (w *Workspace) pruneUnparsed(cut int64) {
	n := 0
	for n < len(w.Unparsed) && w.Unparsed[n].ReceivedAt < cut {
		w.droppedRaw = append(w.droppedRaw, w.Unparsed[n].RawRef)
		n++
	}
	if n > 0 {
		w.Unparsed = slices.Clone(w.Unparsed[n:])
	}
}

func (w *Workspace) UnparsedByID(id string) *UnparsedMail {
	uid, ok := ParseID(id)
	if !ok {
		return nil
	}
	for _, u := range w.Unparsed {
		if u.ID == uid {
			return u
		}
	}
	return nil
}

// appendAI appends an alert's "ai" value (decisions.md 4.6).
func appendAI(b []byte, n *aiNote) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"likelyCause":`...)
	b = jsonx.AppendString(b, n.Cause)
	b = append(b, `,"confidence":`...)
	b = jsonx.AppendString(b, n.Confidence)
	b = append(b, `,"category":`...)
	b = jsonx.AppendString(b, n.Category)
	return append(b, '}')
}

// aiOf returns the suggestion a report record carries, nil for none.
func aiOf(r *Report) *aiNote {
	if r.AICause == "" {
		return nil
	}
	return &aiNote{Cause: strings.Clone(r.AICause), Confidence: r.AIConfidence, Category: r.AICategory}
}

// Report e-mails (decisions.md 10): every job has an ingest address; an
// e-mail to it is a report like the Report API's, or, when its status
// cannot be read, an entry of the workspace's unparsed list whose raw
// message the mail store keeps for a re-read.
// ReportsPerJobPerDay is the daily cap of reports a job records (api.md
// 8.3), Report API and e-mails together.
const ReportsPerJobPerDay = 100

const (
	unparsedKeepMs       = 30 * MsPerDay
	unparsedPerWorkspace = 1000 // the oldest entry leaves when a new one would pass it
	UnparsedPerJobPerDay = ReportsPerJobPerDay
	MaxMailKey           = 998 // bytes of a Message-ID kept as idempotency key
	// mailIdemPrefix sets Message-IDs apart from Report API idempotency keys
	// in a job's key set: a header cannot carry a NUL byte, and a JSON
	// string (the body's idempotency_key) cannot decode to the byte 0xFF.
	MailIdemPrefix = "\x00\xffmail:"
)
