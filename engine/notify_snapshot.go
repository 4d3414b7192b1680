package engine

import (
	"fmt"

	"backupmon/codec"
)

// encodeNotifications appends the workspace's trial note, channels,
// escalation rules and deliveries (a pending one with its notice) to a
// snapshot.
func (w *workspace) encodeNotifications(b []byte) []byte {
	b = codec.AppendVarint(b, w.trialNoted)
	b = codec.AppendUvarint(b, uint64(len(w.channels)))
	for _, c := range w.channels {
		b = append(b, c.id[:]...)
		b = codec.AppendString(b, c.typ)
		b = codec.AppendString(b, c.name)
		b = codec.AppendString(b, c.url)
		b = codec.AppendString(b, c.to)
		b = codec.AppendString(b, c.secret)
		b = append(b, c.minSeverity)
		b = codec.AppendVarint(b, c.createdAt)
	}
	b = codec.AppendUvarint(b, uint64(len(w.escalations)))
	for _, e := range w.escalations {
		b = append(b, e.id[:]...)
		b = append(b, e.channelID[:]...)
		b = codec.AppendVarint(b, e.afterMinutes)
		b = codec.AppendVarint(b, e.createdAt)
	}
	b = codec.AppendUvarint(b, uint64(len(w.deliveries)))
	for _, d := range w.deliveries {
		b = append(b, d.id[:]...)
		b = append(b, d.channelID[:]...)
		b = append(b, d.alertID[:]...)
		b = append(b, d.jobID[:]...)
		b = codec.AppendString(b, d.event)
		b = codec.AppendVarint(b, d.createdAt)
		b = append(b, d.state)
		b = codec.AppendVarint(b, int64(d.attempts))
		b = codec.AppendVarint(b, d.nextAt)
		b = codec.AppendVarint(b, d.firstOutcome)
		b = codec.AppendVarint(b, d.lastAttemptAt)
		b = codec.AppendVarint(b, d.deliveredAt)
		b = codec.AppendString(b, d.lastError)
		b = codec.AppendBool(b, d.notice != nil)
		if n := d.notice; n != nil {
			b = codec.AppendBytes(b, n.Alert)
			b = codec.AppendBytes(b, n.Job)
			b = codec.AppendString(b, n.WorkspaceName)
			b = codec.AppendString(b, n.ClientName)
			b = codec.AppendString(b, n.JobName)
			b = codec.AppendString(b, n.AlertType)
			b = codec.AppendString(b, n.Severity)
			b = codec.AppendString(b, n.Summary)
		}
	}
	return b
}

// decodeNotifications reads what encodeNotifications wrote.
func (w *workspace) decodeNotifications(r *codec.Reader) error {
	w.trialNoted = r.Varint()
	n := count(r)
	for i := 0; i < n && r.Err() == nil; i++ {
		c := &channel{}
		r.Fixed(c.id[:])
		c.typ, c.name, c.url, c.to, c.secret = r.String(), r.String(), r.String(), r.String(), r.String()
		c.minSeverity = r.Byte()
		c.createdAt = r.Varint()
		w.channels = append(w.channels, c)
		w.ids.observe(c.id)
	}
	n = count(r)
	for i := 0; i < n && r.Err() == nil; i++ {
		e := &escalation{}
		r.Fixed(e.id[:])
		r.Fixed(e.channelID[:])
		e.afterMinutes, e.createdAt = r.Varint(), r.Varint()
		w.escalations = append(w.escalations, e)
		w.ids.observe(e.id)
	}
	n = count(r)
	for i := 0; i < n && r.Err() == nil; i++ {
		d := &delivery{}
		r.Fixed(d.id[:])
		r.Fixed(d.channelID[:])
		r.Fixed(d.alertID[:])
		r.Fixed(d.jobID[:])
		d.event = r.String()
		d.createdAt = r.Varint()
		d.state = r.Byte()
		d.attempts = r.Int()
		d.nextAt, d.firstOutcome, d.lastAttemptAt, d.deliveredAt = r.Varint(), r.Varint(), r.Varint(), r.Varint()
		d.lastError = r.String()
		if r.Bool() {
			d.notice = &Notice{Workspace: w.id, Event: d.event}
			d.notice.Alert, d.notice.Job = r.Bytes(), r.Bytes()
			d.notice.WorkspaceName, d.notice.ClientName, d.notice.JobName = r.String(), r.String(), r.String()
			d.notice.AlertType, d.notice.Severity, d.notice.Summary = r.String(), r.String(), r.String()
		}
		if d.state == deliveryPending && d.notice == nil {
			return fmt.Errorf("pending delivery %s without its notice", d.id)
		}
		w.deliveries = append(w.deliveries, d)
		w.deliveryIx[d.id] = d
		if d.state == deliveryPending {
			w.pending.Add(1)
		}
	}
	return r.Err()
}
