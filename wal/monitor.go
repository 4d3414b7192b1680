package wal

import (
	"fmt"

	"backupmon/codec"
)

// Record types of time-driven monitoring and notifications.
const (
	TypeMissed            byte = 15
	TypeEscalated         byte = 16
	TypeDeliveryAttempted byte = 17
	TypeChannelCreated    byte = 18
	TypeChannelDeleted    byte = 19
	TypeEscalationCreated byte = 20
	TypeEscalationDeleted byte = 21
	TypeTrialEnded        byte = 22
)

// Missed records that a job passed its due time plus grace without a
// report: the missing alert it opened (or the unresolved alert it raised).
// Due is the due time that passed; At is that due time plus grace, when the
// job turned missing.
type Missed struct {
	Header
	JobID, AlertID ID
	Due, At        int64
	Summary        string
}

// Escalated records that an alert's escalation rules were looked at up to
// Through (an instant: its creation plus a rule's minutes), and which rules
// found it still open and so notify their channel.
type Escalated struct {
	Header
	AlertID ID
	Through int64
	Rules   []ID
	At      int64
}

// Delivery states for DeliveryAttempted.State.
const (
	DeliveryDelivered uint8 = 1 // the channel took it
	DeliveryRetry     uint8 = 2 // failed; the next attempt is at NextAt
	DeliveryFailed    uint8 = 3 // failed for 24 hours: given up
	DeliveryCancelled uint8 = 4 // not sent: job or client paused, archived or gone
)

// DeliveryAttempted records the outcome of one attempt to deliver a
// notification (or that it was cancelled before an attempt).
type DeliveryAttempted struct {
	Header
	DeliveryID ID
	Attempt    int64
	State      uint8
	Failure    string
	At, NextAt int64
}

// ChannelCreated records a new notification channel.
type ChannelCreated struct {
	Header
	ID, ActivityID             ID
	ChannelType, Name, URL, To string
	Secret                     string
	MinSeverity                uint8 // 1 warning, 2 critical
	CreatedAt                  int64
	Actor                      string // who created it
}

// ChannelDeleted records that a channel, its escalation rules and its
// pending deliveries are gone.
type ChannelDeleted struct {
	Header
	ID, ActivityID ID
	At             int64
	Actor          string // who deleted it
}

// EscalationCreated records a new escalation rule: an alert still open
// AfterMinutes after it opened notifies ChannelID.
type EscalationCreated struct {
	Header
	ID, ActivityID, ChannelID ID
	AfterMinutes              int64
	CreatedAt                 int64
	Actor                     string // who created it
}

// EscalationDeleted records that an escalation rule is gone.
type EscalationDeleted struct {
	Header
	ID, ActivityID ID
	At             int64
	Actor          string // who deleted it
}

// TrialEnded records that a trial workspace's trial ended (at its
// trialEndsAt), for the activity log.
type TrialEnded struct {
	Header
	ActivityID ID
	At         int64
}

// Type returns TypeMissed.
func (*Missed) Type() byte { return TypeMissed }

// Type returns TypeEscalated.
func (*Escalated) Type() byte { return TypeEscalated }

// Type returns TypeDeliveryAttempted.
func (*DeliveryAttempted) Type() byte { return TypeDeliveryAttempted }

// Type returns TypeChannelCreated.
func (*ChannelCreated) Type() byte { return TypeChannelCreated }

// Type returns TypeChannelDeleted.
func (*ChannelDeleted) Type() byte { return TypeChannelDeleted }

// Type returns TypeEscalationCreated.
func (*EscalationCreated) Type() byte { return TypeEscalationCreated }

// Type returns TypeEscalationDeleted.
func (*EscalationDeleted) Type() byte { return TypeEscalationDeleted }

// Type returns TypeTrialEnded.
func (*TrialEnded) Type() byte { return TypeTrialEnded }

// AppendPayload appends the record's encoding.
func (r *Missed) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.JobID[:]...)
	b = append(b, r.AlertID[:]...)
	b = codec.AppendVarint(b, r.Due)
	b = codec.AppendVarint(b, r.At)
	return codec.AppendString(b, r.Summary)
}

// AppendPayload appends the record's encoding.
func (r *Escalated) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.AlertID[:]...)
	b = codec.AppendVarint(b, r.Through)
	b = codec.AppendUvarint(b, uint64(len(r.Rules)))
	for _, id := range r.Rules {
		b = append(b, id[:]...)
	}
	return codec.AppendVarint(b, r.At)
}

// AppendPayload appends the record's encoding.
func (r *DeliveryAttempted) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.DeliveryID[:]...)
	b = codec.AppendVarint(b, r.Attempt)
	b = append(b, r.State)
	b = codec.AppendString(b, r.Failure)
	b = codec.AppendVarint(b, r.At)
	return codec.AppendVarint(b, r.NextAt)
}

// AppendPayload appends the record's encoding.
func (r *ChannelCreated) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ID[:]...)
	b = append(b, r.ActivityID[:]...)
	b = codec.AppendString(b, r.ChannelType)
	b = codec.AppendString(b, r.Name)
	b = codec.AppendString(b, r.URL)
	b = codec.AppendString(b, r.To)
	b = codec.AppendString(b, r.Secret)
	b = append(b, r.MinSeverity)
	b = codec.AppendVarint(b, r.CreatedAt)
	return codec.AppendString(b, r.Actor)
}

// AppendPayload appends the record's encoding.
func (r *ChannelDeleted) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ID[:]...)
	b = append(b, r.ActivityID[:]...)
	b = codec.AppendVarint(b, r.At)
	return codec.AppendString(b, r.Actor)
}

// AppendPayload appends the record's encoding.
func (r *EscalationCreated) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ID[:]...)
	b = append(b, r.ActivityID[:]...)
	b = append(b, r.ChannelID[:]...)
	b = codec.AppendVarint(b, r.AfterMinutes)
	b = codec.AppendVarint(b, r.CreatedAt)
	return codec.AppendString(b, r.Actor)
}

// AppendPayload appends the record's encoding.
func (r *EscalationDeleted) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ID[:]...)
	b = append(b, r.ActivityID[:]...)
	b = codec.AppendVarint(b, r.At)
	return codec.AppendString(b, r.Actor)
}

// AppendPayload appends the record's encoding.
func (r *TrialEnded) AppendPayload(b []byte) []byte {
	b = r.Header.append(b)
	b = append(b, r.ActivityID[:]...)
	return codec.AppendVarint(b, r.At)
}

// decodeMonitor decodes the record types of this file; ok is false for any
// other type.
func decodeMonitor(typ byte, r *codec.Reader) (e Entry, ok bool) {
	switch typ {
	case TypeMissed:
		x := &Missed{}
		x.Header.read(r)
		r.Fixed(x.JobID[:])
		r.Fixed(x.AlertID[:])
		x.Due, x.At = r.Varint(), r.Varint()
		x.Summary = r.String()
		return x, true
	case TypeEscalated:
		x := &Escalated{}
		x.Header.read(r)
		r.Fixed(x.AlertID[:])
		x.Through = r.Varint()
		n := r.Uvarint()
		if n > uint64(r.Len())/16 {
			r.Fail(fmt.Errorf("%w: %d escalation rules in %d bytes", codec.ErrShort, n, r.Len()))
			n = 0
		}
		if n > 0 {
			x.Rules = make([]ID, n)
		}
		for i := range x.Rules {
			r.Fixed(x.Rules[i][:])
		}
		x.At = r.Varint()
		return x, true
	case TypeDeliveryAttempted:
		x := &DeliveryAttempted{}
		x.Header.read(r)
		r.Fixed(x.DeliveryID[:])
		x.Attempt = r.Varint()
		x.State = r.Byte()
		x.Failure = r.String()
		x.At, x.NextAt = r.Varint(), r.Varint()
		return x, true
	case TypeChannelCreated:
		x := &ChannelCreated{}
		x.Header.read(r)
		r.Fixed(x.ID[:])
		r.Fixed(x.ActivityID[:])
		x.ChannelType, x.Name, x.URL, x.To = r.String(), r.String(), r.String(), r.String()
		x.Secret = r.String()
		x.MinSeverity = r.Byte()
		x.CreatedAt = r.Varint()
		x.Actor = r.String()
		return x, true
	case TypeChannelDeleted:
		x := &ChannelDeleted{}
		x.Header.read(r)
		r.Fixed(x.ID[:])
		r.Fixed(x.ActivityID[:])
		x.At = r.Varint()
		x.Actor = r.String()
		return x, true
	case TypeEscalationCreated:
		x := &EscalationCreated{}
		x.Header.read(r)
		r.Fixed(x.ID[:])
		r.Fixed(x.ActivityID[:])
		r.Fixed(x.ChannelID[:])
		x.AfterMinutes, x.CreatedAt = r.Varint(), r.Varint()
		x.Actor = r.String()
		return x, true
	case TypeEscalationDeleted:
		x := &EscalationDeleted{}
		x.Header.read(r)
		r.Fixed(x.ID[:])
		r.Fixed(x.ActivityID[:])
		x.At = r.Varint()
		x.Actor = r.String()
		return x, true
	case TypeTrialEnded:
		x := &TrialEnded{}
		x.Header.read(r)
		r.Fixed(x.ActivityID[:])
		x.At = r.Varint()
		return x, true
	}
	return nil, false
}
