package wal

import (
	"fmt"

	"backupmon/codec"
)

// Record types. Each record is pure data, fully decided before it is logged
// (ids, times, outcome), so that applying it live and on replay gives the
// same state. Numbers are part of the log format: never reuse one.
const (
	TypeWorkspaceCreated byte = 1
	TypeWorkspaceUpdated byte = 2
	TypeClientCreated    byte = 3
	TypeClientUpdated    byte = 4
	TypeJobCreated       byte = 5
	TypeJobUpdated       byte = 6
	TypeJobDeleted       byte = 7
	TypeKeyCreated       byte = 8
	TypeKeyRevoked       byte = 9
	TypeKeyFirstUsed     byte = 10
	TypeReport           byte = 11
	TypeAlertChanged     byte = 12
	TypeClockSet         byte = 13
	TypeRESTUsage        byte = 14
)

// ID is a 16-byte identifier as the engine makes them.
type ID = [16]byte

// Header starts every record: the workspace it belongs to (zero for records
// of the whole engine) and the workspace's record sequence number, which lets
// replay skip records a snapshot already holds.
type Header struct {
	Workspace ID
	Seq       uint64
}

// Head returns the record's header.
func (h *Header) Head() *Header { return h }

func (h *Header) append(dst []byte) []byte {
	dst = append(dst, h.Workspace[:]...)
	return codec.AppendUvarint(dst, h.Seq)
}

func (h *Header) read(r *codec.Reader) {
	r.Fixed(h.Workspace[:])
	h.Seq = r.Uvarint()
}

// Entry is a record with a header: every record type the engine logs.
type Entry interface {
	Record
	Head() *Header
}

// WorkspaceCreated records a new workspace.
type WorkspaceCreated struct {
	Header
	Name, TimeZone, Plan, Status string
	TrialEndsAt, CreatedAt       int64
}

// Workspace field bits for WorkspaceUpdated.Fields.
const (
	WorkspaceName uint8 = 1 << iota
	WorkspaceTimeZone
	WorkspacePlan
	WorkspaceStatus
	WorkspaceTrialEndsAt
)

// WorkspaceUpdated records changed workspace fields (those set in Fields).
type WorkspaceUpdated struct {
	Header
	Fields                       uint8
	Name, TimeZone, Plan, Status string
	TrialEndsAt, At              int64
}

// ClientCreated records a new client.
type ClientCreated struct {
	Header
	ID, ActivityID ID
	Name, Status   string
	CreatedAt      int64
}

// Client field bits for ClientUpdated.Fields.
const (
	ClientName uint8 = 1 << iota
	ClientStatus
)

// ClientUpdated records changed client fields (those set in Fields).
type ClientUpdated struct {
	Header
	ID, ActivityID ID
	Fields         uint8
	Name, Status   string
	At             int64
}

// JobCreated records a new job and the device it runs on.
type JobCreated struct {
	Header
	ID, ClientID, DeviceID, ActivityID ID
	Name, Vendor                       string
	DeviceName, DeviceType, Hostname   string
	IntervalMinutes, GraceMinutes      int64
	ExpectedDays                       uint8
	SLATarget                          float64
	CreatedAt                          int64
	IngestToken                        string
}

// Job field bits for JobUpdated.Fields.
const (
	JobName uint16 = 1 << iota
	JobVendor
	JobDevice
	JobSchedule
	JobSLATarget
	JobPaused
)

// JobUpdated records changed job fields (those set in Fields). A device
// change names the device (new or shared) the job runs on after it; a
// schedule change carries the whole schedule; a pause change carries Paused
// and PausedUntil (0: no end).
type JobUpdated struct {
	Header
	ID, ActivityID                   ID
	Fields                           uint16
	Name, Vendor                     string
	DeviceID                         ID
	DeviceName, DeviceType, Hostname string
	IntervalMinutes, GraceMinutes    int64
	ExpectedDays                     uint8
	SLATarget                        float64
	Paused                           bool
	PausedUntil                      int64
	At                               int64
	// Actor and Note say who made the change and why (activity log).
	Actor, Note string
}

// JobDeleted records that a job, its results and its alerts are gone.
type JobDeleted struct {
	Header
	ID, ActivityID ID
	At             int64
}

// KeyCreated records a new API key (its SHA-256, never the secret).
type KeyCreated struct {
	Header
	ID, ActivityID       ID
	Name, KeyType        string
	Prefix               string
	Hash                 [32]byte
	Scopes               uint8
	ReadWrite            bool
	CreatedAt, ExpiresAt int64
	Actor                string // who created it
}

// KeyRevoked records that a key was deleted.
type KeyRevoked struct {
	Header
	ID, ActivityID ID
	At             int64
	Actor          string // who revoked it
}

// KeyFirstUsed records the first use of a REST key.
type KeyFirstUsed struct {
	Header
	ID, ActivityID ID
	At             int64
}

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
}

// Alert actions for AlertChanged.Action.
const (
	AlertAcknowledge uint8 = 1
	AlertSnooze      uint8 = 2
	AlertResolve     uint8 = 3
)

// AlertChanged records a person's (or the admin API's) action on an alert.
type AlertChanged struct {
	Header
	AlertID, ActivityID ID
	Action              uint8
	Until               int64
	At                  int64
	Actor, Note         string
}

// ClockSet records a move of the development clock, so a restart resumes at
// the same development time.
type ClockSet struct {
	Header
	Now int64
}

// RESTUsage records a workspace's REST API request count for a calendar
// month (year*100 + month), so that the monthly quota survives a restart.
type RESTUsage struct {
	Header
	Month, Count int64
}

// Type returns TypeRESTUsage.
func (*RESTUsage) Type() byte { return TypeRESTUsage }

// AppendPayload appends the record's encoding.
func (r *RESTUsage) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = codec.AppendVarint(b, r.Month)
	return codec.AppendVarint(b, r.Count)
}

// Type returns TypeWorkspaceCreated.
func (*WorkspaceCreated) Type() byte { return TypeWorkspaceCreated }

// Type returns TypeWorkspaceUpdated.
func (*WorkspaceUpdated) Type() byte { return TypeWorkspaceUpdated }

// Type returns TypeClientCreated.
func (*ClientCreated) Type() byte { return TypeClientCreated }

// Type returns TypeClientUpdated.
func (*ClientUpdated) Type() byte { return TypeClientUpdated }

// Type returns TypeJobCreated.
func (*JobCreated) Type() byte { return TypeJobCreated }

// Type returns TypeJobUpdated.
func (*JobUpdated) Type() byte { return TypeJobUpdated }

// Type returns TypeJobDeleted.
func (*JobDeleted) Type() byte { return TypeJobDeleted }

// Type returns TypeKeyCreated.
func (*KeyCreated) Type() byte { return TypeKeyCreated }

// Type returns TypeKeyRevoked.
func (*KeyRevoked) Type() byte { return TypeKeyRevoked }

// Type returns TypeKeyFirstUsed.
func (*KeyFirstUsed) Type() byte { return TypeKeyFirstUsed }

// Type returns TypeReport.
func (*Report) Type() byte { return TypeReport }

// Type returns TypeAlertChanged.
func (*AlertChanged) Type() byte { return TypeAlertChanged }

// Type returns TypeClockSet.
func (*ClockSet) Type() byte { return TypeClockSet }

// AppendPayload appends the record's encoding.
func (r *WorkspaceCreated) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = codec.AppendString(b, r.Name)
	b = codec.AppendString(b, r.TimeZone)
	b = codec.AppendString(b, r.Plan)
	b = codec.AppendString(b, r.Status)
	b = codec.AppendVarint(b, r.TrialEndsAt)
	return codec.AppendVarint(b, r.CreatedAt)
}

// AppendPayload appends the record's encoding.
func (r *WorkspaceUpdated) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.Fields)
	b = codec.AppendString(b, r.Name)
	b = codec.AppendString(b, r.TimeZone)
	b = codec.AppendString(b, r.Plan)
	b = codec.AppendString(b, r.Status)
	b = codec.AppendVarint(b, r.TrialEndsAt)
	return codec.AppendVarint(b, r.At)
}

// AppendPayload appends the record's encoding.
func (r *ClientCreated) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ID[:]...)
	b = codec.AppendString(b, r.Name)
	b = codec.AppendString(b, r.Status)
	b = codec.AppendVarint(b, r.CreatedAt)
	return append(b, r.ActivityID[:]...)
}

// AppendPayload appends the record's encoding.
func (r *ClientUpdated) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ID[:]...)
	b = append(b, r.Fields)
	b = codec.AppendString(b, r.Name)
	b = codec.AppendString(b, r.Status)
	b = codec.AppendVarint(b, r.At)
	return append(b, r.ActivityID[:]...)
}

// AppendPayload appends the record's encoding.
func (r *JobCreated) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ID[:]...)
	b = append(b, r.ClientID[:]...)
	b = append(b, r.DeviceID[:]...)
	b = codec.AppendString(b, r.Name)
	b = codec.AppendString(b, r.Vendor)
	b = codec.AppendString(b, r.DeviceName)
	b = codec.AppendString(b, r.DeviceType)
	b = codec.AppendString(b, r.Hostname)
	b = codec.AppendVarint(b, r.IntervalMinutes)
	b = codec.AppendVarint(b, r.GraceMinutes)
	b = append(b, r.ExpectedDays)
	b = codec.AppendFloat(b, r.SLATarget)
	b = codec.AppendVarint(b, r.CreatedAt)
	b = codec.AppendString(b, r.IngestToken)
	return append(b, r.ActivityID[:]...)
}

// AppendPayload appends the record's encoding.
func (r *JobUpdated) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ID[:]...)
	b = codec.AppendUvarint(b, uint64(r.Fields))
	b = codec.AppendString(b, r.Name)
	b = codec.AppendString(b, r.Vendor)
	b = append(b, r.DeviceID[:]...)
	b = codec.AppendString(b, r.DeviceName)
	b = codec.AppendString(b, r.DeviceType)
	b = codec.AppendString(b, r.Hostname)
	b = codec.AppendVarint(b, r.IntervalMinutes)
	b = codec.AppendVarint(b, r.GraceMinutes)
	b = append(b, r.ExpectedDays)
	b = codec.AppendFloat(b, r.SLATarget)
	b = codec.AppendBool(b, r.Paused)
	b = codec.AppendVarint(b, r.PausedUntil)
	b = codec.AppendVarint(b, r.At)
	b = append(b, r.ActivityID[:]...)
	b = codec.AppendString(b, r.Actor)
	return codec.AppendString(b, r.Note)
}

// AppendPayload appends the record's encoding.
func (r *JobDeleted) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ID[:]...)
	b = codec.AppendVarint(b, r.At)
	return append(b, r.ActivityID[:]...)
}

// AppendPayload appends the record's encoding.
func (r *KeyCreated) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ID[:]...)
	b = append(b, r.ActivityID[:]...)
	b = codec.AppendString(b, r.Name)
	b = codec.AppendString(b, r.KeyType)
	b = codec.AppendString(b, r.Prefix)
	b = append(b, r.Hash[:]...)
	b = append(b, r.Scopes)
	b = codec.AppendBool(b, r.ReadWrite)
	b = codec.AppendVarint(b, r.CreatedAt)
	b = codec.AppendVarint(b, r.ExpiresAt)
	return codec.AppendString(b, r.Actor)
}

// AppendPayload appends the record's encoding.
func (r *KeyRevoked) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ID[:]...)
	b = append(b, r.ActivityID[:]...)
	b = codec.AppendVarint(b, r.At)
	return codec.AppendString(b, r.Actor)
}

// AppendPayload appends the record's encoding.
func (r *KeyFirstUsed) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ID[:]...)
	b = append(b, r.ActivityID[:]...)
	return codec.AppendVarint(b, r.At)
}

// AppendPayload appends the record's encoding.
func (r *Report) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.JobID[:]...)
	b = append(b, r.ResultID[:]...)
	b = append(b, r.Status)
	b = codec.AppendVarint(b, r.ReceivedAt)
	b = codec.AppendVarint(b, r.CompletedAt)
	b = codec.AppendVarint(b, r.DurationSeconds)
	b = codec.AppendVarint(b, r.SizeBytes)
	b = codec.AppendString(b, r.IdempotencyKey)
	b = codec.AppendString(b, r.Source)
	b = codec.AppendBool(b, r.Superseded)
	b = append(b, r.AlertID[:]...)
	b = append(b, r.AlertType)
	b = codec.AppendString(b, r.Summary)
	if r.AICause == "" && r.AIConfidence == "" && r.AICategory == "" && r.UnparsedID == (ID{}) {
		return codec.AppendBool(b, false)
	}
	b = codec.AppendBool(b, true)
	b = codec.AppendString(b, r.AICause)
	b = codec.AppendString(b, r.AIConfidence)
	b = codec.AppendString(b, r.AICategory)
	return append(b, r.UnparsedID[:]...)
}

// AppendPayload appends the record's encoding.
func (r *AlertChanged) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.AlertID[:]...)
	b = append(b, r.ActivityID[:]...)
	b = append(b, r.Action)
	b = codec.AppendVarint(b, r.Until)
	b = codec.AppendVarint(b, r.At)
	b = codec.AppendString(b, r.Actor)
	return codec.AppendString(b, r.Note)
}

// AppendPayload appends the record's encoding.
func (r *ClockSet) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	return codec.AppendVarint(b, r.Now)
}

// Decode turns a record type and payload read from the log back into a
// record. It returns an error for an unknown type or a malformed payload.
func Decode(typ byte, payload []byte) (Entry, error) {
	r := codec.NewReader(payload)
	var e Entry
	switch typ {
	case TypeWorkspaceCreated:
		x := &WorkspaceCreated{}
		x.Header.read(r)
		x.Name, x.TimeZone, x.Plan, x.Status = r.String(), r.String(), r.String(), r.String()
		x.TrialEndsAt, x.CreatedAt = r.Varint(), r.Varint()
		e = x
	case TypeWorkspaceUpdated:
		x := &WorkspaceUpdated{}
		x.Header.read(r)
		x.Fields = r.Byte()
		x.Name, x.TimeZone, x.Plan, x.Status = r.String(), r.String(), r.String(), r.String()
		x.TrialEndsAt, x.At = r.Varint(), r.Varint()
		e = x
	case TypeClientCreated:
		x := &ClientCreated{}
		x.Header.read(r)
		r.Fixed(x.ID[:])
		x.Name, x.Status = r.String(), r.String()
		x.CreatedAt = r.Varint()
		r.Fixed(x.ActivityID[:])
		e = x
	case TypeClientUpdated:
		x := &ClientUpdated{}
		x.Header.read(r)
		r.Fixed(x.ID[:])
		x.Fields = r.Byte()
		x.Name, x.Status = r.String(), r.String()
		x.At = r.Varint()
		r.Fixed(x.ActivityID[:])
		e = x
	case TypeJobCreated:
		x := &JobCreated{}
		x.Header.read(r)
		r.Fixed(x.ID[:])
		r.Fixed(x.ClientID[:])
		r.Fixed(x.DeviceID[:])
		x.Name, x.Vendor = r.String(), r.String()
		x.DeviceName, x.DeviceType, x.Hostname = r.String(), r.String(), r.String()
		x.IntervalMinutes, x.GraceMinutes = r.Varint(), r.Varint()
		x.ExpectedDays = r.Byte()
		x.SLATarget = r.Float()
		x.CreatedAt = r.Varint()
		x.IngestToken = r.String()
		r.Fixed(x.ActivityID[:])
		e = x
	case TypeJobUpdated:
		x := &JobUpdated{}
		x.Header.read(r)
		r.Fixed(x.ID[:])
		f := r.Uvarint()
		if f > 0xffff {
			r.Fail(fmt.Errorf("%w: job fields %d", codec.ErrInvalid, f))
		}
		x.Fields = uint16(f)
		x.Name, x.Vendor = r.String(), r.String()
		r.Fixed(x.DeviceID[:])
		x.DeviceName, x.DeviceType, x.Hostname = r.String(), r.String(), r.String()
		x.IntervalMinutes, x.GraceMinutes = r.Varint(), r.Varint()
		x.ExpectedDays = r.Byte()
		x.SLATarget = r.Float()
		x.Paused = r.Bool()
		x.PausedUntil, x.At = r.Varint(), r.Varint()
		r.Fixed(x.ActivityID[:])
		x.Actor, x.Note = r.String(), r.String()
		e = x
	case TypeJobDeleted:
		x := &JobDeleted{}
		x.Header.read(r)
		r.Fixed(x.ID[:])
		x.At = r.Varint()
		r.Fixed(x.ActivityID[:])
		e = x
	case TypeKeyCreated:
		x := &KeyCreated{}
		x.Header.read(r)
		r.Fixed(x.ID[:])
		r.Fixed(x.ActivityID[:])
		x.Name, x.KeyType, x.Prefix = r.String(), r.String(), r.String()
		r.Fixed(x.Hash[:])
		x.Scopes = r.Byte()
		x.ReadWrite = r.Bool()
		x.CreatedAt, x.ExpiresAt = r.Varint(), r.Varint()
		x.Actor = r.String()
		e = x
	case TypeKeyRevoked:
		x := &KeyRevoked{}
		x.Header.read(r)
		r.Fixed(x.ID[:])
		r.Fixed(x.ActivityID[:])
		x.At = r.Varint()
		x.Actor = r.String()
		e = x
	case TypeKeyFirstUsed:
		x := &KeyFirstUsed{}
		x.Header.read(r)
		r.Fixed(x.ID[:])
		r.Fixed(x.ActivityID[:])
		x.At = r.Varint()
		e = x
	case TypeReport:
		x := &Report{}
		x.Header.read(r)
		r.Fixed(x.JobID[:])
		r.Fixed(x.ResultID[:])
		x.Status = r.Byte()
		x.ReceivedAt, x.CompletedAt = r.Varint(), r.Varint()
		x.DurationSeconds, x.SizeBytes = r.Varint(), r.Varint()
		x.IdempotencyKey, x.Source = r.String(), r.String()
		x.Superseded = r.Bool()
		r.Fixed(x.AlertID[:])
		x.AlertType = r.Byte()
		x.Summary = r.String()
		if r.Bool() {
			x.AICause, x.AIConfidence, x.AICategory = r.String(), r.String(), r.String()
			r.Fixed(x.UnparsedID[:])
		}
		e = x
	case TypeAlertChanged:
		x := &AlertChanged{}
		x.Header.read(r)
		r.Fixed(x.AlertID[:])
		r.Fixed(x.ActivityID[:])
		x.Action = r.Byte()
		x.Until, x.At = r.Varint(), r.Varint()
		x.Actor, x.Note = r.String(), r.String()
		e = x
	case TypeClockSet:
		x := &ClockSet{}
		x.Header.read(r)
		x.Now = r.Varint()
		e = x
	case TypeRESTUsage:
		x := &RESTUsage{}
		x.Header.read(r)
		x.Month, x.Count = r.Varint(), r.Varint()
		e = x
	default:
		x, ok := decodeMonitor(typ, r)
		if !ok {
			x, ok = decodeMail(typ, r)
		}
		if !ok {
			x, ok = decodePeople(typ, r)
		}
		if !ok {
			return nil, fmt.Errorf("decode record: unknown type %d", typ)
		}
		e = x
	}
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("decode record type %d: %w", typ, err)
	}
	return e, nil
}
