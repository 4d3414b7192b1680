package wal

import "backupmon/codec"

// Record types of report e-mails.
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

// MailUnparsed records a report e-mail whose status could not be read: it
// is listed with its reason, and its raw message is kept under RawRef (by
// the mail store, outside the log) so that it can be read again.
type MailUnparsed struct {
	Header
	ID, JobID              ID
	ReceivedAt             int64
	MessageID, Digest      string
	Subject, From          string
	Reason, Vendor, RawRef string
	Size                   int64
}

// UnparsedGone records that an unparsed e-mail left the list without
// becoming a report (dropped by an admin); a re-read that succeeds removes
// it with its Report (Report.UnparsedID).
type UnparsedGone struct {
	Header
	ID ID
	At int64
}

// Type returns TypeIngestRotated.
func (*IngestRotated) Type() byte { return TypeIngestRotated }

// Type returns TypeMailUnparsed.
func (*MailUnparsed) Type() byte { return TypeMailUnparsed }

// Type returns TypeUnparsedGone.
func (*UnparsedGone) Type() byte { return TypeUnparsedGone }

// AppendPayload appends the record's encoding.
func (r *IngestRotated) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.JobID[:]...)
	b = append(b, r.ActivityID[:]...)
	b = codec.AppendString(b, r.Token)
	return codec.AppendVarint(b, r.At)
}

// AppendPayload appends the record's encoding.
func (r *MailUnparsed) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ID[:]...)
	b = append(b, r.JobID[:]...)
	b = codec.AppendVarint(b, r.ReceivedAt)
	b = codec.AppendString(b, r.MessageID)
	b = codec.AppendString(b, r.Digest)
	b = codec.AppendString(b, r.Subject)
	b = codec.AppendString(b, r.From)
	b = codec.AppendString(b, r.Reason)
	b = codec.AppendString(b, r.Vendor)
	b = codec.AppendString(b, r.RawRef)
	return codec.AppendVarint(b, r.Size)
}

// AppendPayload appends the record's encoding.
func (r *UnparsedGone) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ID[:]...)
	return codec.AppendVarint(b, r.At)
}

// decodeMail decodes the record types of this file; ok is false for any
// other type.
func decodeMail(typ byte, r *codec.Reader) (e Entry, ok bool) {
	switch typ {
	case TypeIngestRotated:
		x := &IngestRotated{}
		x.Header.read(r)
		r.Fixed(x.JobID[:])
		r.Fixed(x.ActivityID[:])
		x.Token = r.String()
		x.At = r.Varint()
		return x, true
	case TypeMailUnparsed:
		x := &MailUnparsed{}
		x.Header.read(r)
		r.Fixed(x.ID[:])
		r.Fixed(x.JobID[:])
		x.ReceivedAt = r.Varint()
		x.MessageID, x.Digest = r.String(), r.String()
		x.Subject, x.From = r.String(), r.String()
		x.Reason, x.Vendor, x.RawRef = r.String(), r.String(), r.String()
		x.Size = r.Varint()
		return x, true
	case TypeUnparsedGone:
		x := &UnparsedGone{}
		x.Header.read(r)
		r.Fixed(x.ID[:])
		x.At = r.Varint()
		return x, true
	}
	return nil, false
}
