package state

import (
	"fmt"
	"slices"

	"backupmon/codec"
)

// Channels that follow an alert's life in another system: the PSA tickets
// (ConnectWise, Autotask, HaloPSA) and PagerDuty incidents.

// Channel types of the issue 23 (decisions.md 7).
const (
	ChannelConnectWise = "connectwise"
	ChannelAutotask    = "autotask"
	ChannelHaloPSA     = "halopsa"
	ChannelTeams       = "teams"
	ChannelPagerDuty   = "pagerduty"
)

// Events sent only to the channels that follow an alert's life
// (FollowsAlert): a person acknowledged or snoozed it.
const (
	EventAcknowledged = "alert.acknowledged"
	EventSnoozed      = "alert.snoozed"
)

// IsPSA reports whether channel type t makes one ticket per alert whose id
// is kept with the alert (TicketLinked).
func IsPSA(t string) bool {
	return t == ChannelConnectWise || t == ChannelAutotask || t == ChannelHaloPSA
}

// FollowsAlert reports whether channel type t follows an alert's whole
// life: it also gets EventAcknowledged, EventSnoozed and a resolve by
// hand, and the deliveries of one alert to it are made one at a time, in
// order.
func FollowsAlert(t string) bool { return IsPSA(t) || t == ChannelPagerDuty }

// Setting is one named value of a channel's configuration.
type Setting struct{ Key, Value string }

// Lookup returns the value of key in list, or "".
func Lookup(list []Setting, key string) string {
	for _, s := range list {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// ClientMap maps a workspace client to a PSA company (and optionally its
// board or queue and ticket type) for one channel.
type ClientMap struct {
	ClientID               ID
	Company, Board, Ticket string // Ticket: the ticket type
}

// TicketLink is the ticket (or incident) an alert has in one channel.
type TicketLink struct {
	ChannelID ID
	Ticket    string
}

// TicketOf returns the ticket alert a has in channel ch, or "".
func (a *Alert) TicketOf(ch ID) string {
	for _, t := range a.Tickets {
		if t.ChannelID == ch {
			return t.Ticket
		}
	}
	return ""
}

// MapOf returns the mapping of client id in channel c, or nil.
func (c *Channel) MapOf(id ID) *ClientMap {
	for i := range c.Maps {
		if c.Maps[i].ClientID == id {
			return &c.Maps[i]
		}
	}
	return nil
}

// setMap sets (company not empty) or removes the mapping of m.ClientID.
func (c *Channel) setMap(m ClientMap) {
	c.Maps = slices.DeleteFunc(c.Maps, func(x ClientMap) bool { return x.ClientID == m.ClientID })
	if m.Company != "" {
		c.Maps = append(c.Maps, m)
	}
}

// Blocked reports whether d must wait for an earlier delivery of the same
// alert to the same channel: deliveries to a channel that follows the
// alert go one at a time, in order, so that a note never races the
// ticket's creation.
func (w *Workspace) Blocked(d *Delivery) bool {
	c := w.Channel(d.ChannelID)
	if c == nil || !FollowsAlert(c.Type) {
		return false
	}
	return w.earlierPending(d) != nil
}

// earlierPending returns the first pending delivery of d's alert to d's
// channel made before d, or nil.
func (w *Workspace) earlierPending(d *Delivery) *Delivery {
	for _, x := range w.Deliveries {
		if x == d {
			return nil
		}
		if x.State == DeliveryPending && x.AlertID == d.AlertID && x.ChannelID == d.ChannelID {
			return x
		}
	}
	return nil
}

// nextWaiting returns the pending delivery of d's alert to d's channel
// that waited for d (the first after it), or nil.
func (w *Workspace) nextWaiting(d *Delivery) *Delivery {
	seen := false
	for _, x := range w.Deliveries {
		if x == d {
			seen = true
			continue
		}
		if seen && x.State == DeliveryPending && x.AlertID == d.AlertID && x.ChannelID == d.ChannelID {
			return x
		}
	}
	return nil
}

// walkPSA walks what snapshots of layout 7 add at the end of the
// workspace: the channels' settings, secrets and client maps, the alerts'
// tickets, and the pending notices' notes and run facts.
func (w *Workspace) walkPSA(s *snap) error {
	f := s.f
	kv := func(f *codec.Fields, x *Setting) { f.Walk(&x.Key, &x.Value) }
	for _, c := range w.Channels {
		codec.Slice(f, &c.Settings, 2, kv)
		codec.Slice(f, &c.Secrets, 2, kv)
		codec.Slice(f, &c.Maps, 19, func(f *codec.Fields, m *ClientMap) { f.Walk(m.ClientID[:], &m.Company, &m.Board, &m.Ticket) })
	}
	var linked []*Alert
	if !s.reading() {
		for _, a := range w.AlertLog {
			if len(a.Tickets) > 0 {
				linked = append(linked, a)
			}
		}
	}
	n := f.Count(len(linked), 17)
	for i := 0; i < n && f.Err() == nil; i++ {
		var id ID
		var tickets []TicketLink
		if !s.reading() {
			id, tickets = linked[i].ID, linked[i].Tickets
		}
		f.Fixed(id[:])
		codec.Slice(f, &tickets, 17, func(f *codec.Fields, t *TicketLink) { f.Walk(t.ChannelID[:], &t.Ticket) })
		if s.reading() && f.Err() == nil {
			// Only alerts with tickets are listed, each once: another
			// entry would be dropped here, and the tickets with it.
			a := w.Alerts[id]
			if a == nil || a.Tickets != nil || len(tickets) == 0 {
				return fmt.Errorf("%d tickets of alert %s, unknown or listed twice: %w", len(tickets), id, codec.ErrInvalid)
			}
			a.Tickets = tickets
		}
	}
	for _, d := range w.Deliveries {
		if d.Notice != nil {
			f.Walk(&d.Notice.Note, &d.Notice.SizeBytes, &d.Notice.DurationSeconds)
		}
	}
	return f.Err()
}

// releaseNext schedules the delivery that waited for d, now finished (see
// Blocked), at its own time or at, whichever is later.
func (w *Workspace) releaseNext(d *Delivery, at int64) {
	if next := w.nextWaiting(d); next != nil {
		w.hooks.Schedule(max(next.NextAt, at), TimerDelivery, nil, next)
	}
}

// lastRunFacts returns the size and duration of job j's last run, -1
// where it has none.
func lastRunFacts(j *Job) (size, seconds int64) {
	if len(j.Results) == 0 {
		return -1, -1
	}
	r := j.Results[len(j.Results)-1]
	return r.SizeBytes, int64(r.Duration)
}

// actionNote is what a PSA note says of a person's action on an alert:
// who did it, until when a snooze lasts, and their note.
func actionNote(r *AlertChanged) string {
	who := actorOr(r.Actor)
	var s string
	switch r.Action {
	case AlertAcknowledge:
		s = "Acknowledged by " + who
	case AlertSnooze:
		s = "Snoozed by " + who + " until " + FormatTime(r.Until)
	default:
		s = "Resolved by " + who
	}
	if r.Note != "" {
		s += ": " + r.Note
	}
	return s
}
