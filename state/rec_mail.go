package state

import (
	"fmt"
	"slices"

	"backupmon/codec"
)

// Records of report e-mails: ingest addresses and the e-mails that could not
// be read.

// Record type numbers of this file.
const (
	TypeIngestRotated byte = 23
	TypeMailUnparsed  byte = 24
	TypeUnparsedGone  byte = 25
)

// IngestRotated records a job's new ingest token; the old one is retired.
type IngestRotated struct {
	Header
	JobID, ActivityID ID
	Token             string
	At                int64
}

func (r *IngestRotated) fields(f *codec.Fields) { f.Walk(r.JobID[:], r.ActivityID[:], &r.Token, &r.At) }

func (r *IngestRotated) apply(w *Workspace) error {
	j := w.Jobs[r.JobID]
	if j == nil {
		return fmt.Errorf("rotate the ingest address of unknown job %s", r.JobID)
	}
	w.hooks.IngestRemoved(j.IngestToken)
	j.IngestToken = r.Token
	w.hooks.IngestAdded(w, j)
	w.addActivity(Activity{ID: r.ActivityID, At: r.At, Type: "job.ingest_address_rotated", Actor: "admin", JobID: j.ID, SubjectName: j.Name})
	return nil
}

// MailUnparsed records a report e-mail whose status could not be read: it
// is listed with its reason, and its raw message is kept under RawRef (by
// the mail store, outside the log) so that it can be read again.
// Its body is the unparsed e-mail's entry, as the list (and snapshots)
// keep it.
type MailUnparsed struct {
	Header
	UnparsedMail
}

func (r *MailUnparsed) apply(w *Workspace) error {
	u := new(UnparsedMail)
	*u = r.UnparsedMail
	w.Unparsed = append(w.Unparsed, u)
	if over := len(w.Unparsed) - unparsedPerWorkspace; over > 0 {
		for _, old := range w.Unparsed[:over] {
			w.droppedRaw = append(w.droppedRaw, old.RawRef)
		}
		w.Unparsed = slices.Delete(w.Unparsed, 0, over)
	}
	w.IDs.Observe(r.ID)
	return nil
}

// UnparsedGone records that an unparsed e-mail left the list without
// becoming a report (dropped by an admin); a re-read that succeeds removes
// it with its Report (Report.UnparsedID).
type UnparsedGone struct{ Mark }

func (r *UnparsedGone) apply(w *Workspace) error {
	w.removeUnparsed(r.ID)
	return nil
}
