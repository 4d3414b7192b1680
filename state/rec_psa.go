package state

import (
	"fmt"

	"backupmon/codec"
)

// Records of the channels that follow an alert's life: a channel with its
// settings and write-only secrets, a client's PSA company, and the ticket
// an alert has in a PSA.

// Record type numbers of this file (40 to 49 are this area's).
const (
	TypeTicketChannelCreated byte = 40
	TypeClientMapped         byte = 41
	TypeTicketLinked         byte = 42
)

// TicketChannelCreated records a new channel of a type that needs
// settings (connectwise, autotask, halopsa, teams, pagerduty): the channel
// as ChannelCreated records it, its settings, and its secrets, which no
// read ever shows.
type TicketChannelCreated struct {
	ChannelCreated
	Settings, Secrets []Setting
}

func (r *TicketChannelCreated) fields(f *codec.Fields) {
	r.ChannelCreated.fields(f)
	kv := func(f *codec.Fields, x *Setting) { f.Walk(&x.Key, &x.Value) }
	codec.Slice(f, &r.Settings, 2, kv)
	codec.Slice(f, &r.Secrets, 2, kv)
}

func (r *TicketChannelCreated) apply(w *Workspace) error {
	if err := r.ChannelCreated.apply(w); err != nil {
		return err
	}
	c := w.Channel(r.ID)
	c.Settings, c.Secrets = r.Settings, r.Secrets
	return nil
}

// ClientMapped records which PSA company (board or queue, ticket type) a
// client's tickets go to in one channel; an empty Company removes the
// mapping, and the client's tickets go to the channel's default company.
type ClientMapped struct {
	Header
	ChannelID, ClientID    ID
	Company, Board, Ticket string
	At                     int64
}

func (r *ClientMapped) fields(f *codec.Fields) {
	f.Walk(r.ChannelID[:], r.ClientID[:], &r.Company, &r.Board, &r.Ticket, &r.At)
}

func (r *ClientMapped) apply(w *Workspace) error {
	c := w.Channel(r.ChannelID)
	if c == nil {
		return fmt.Errorf("map a client in unknown channel %s", r.ChannelID)
	}
	if w.Clients[r.ClientID] == nil {
		return fmt.Errorf("map unknown client %s", r.ClientID)
	}
	c.setMap(ClientMap{ClientID: r.ClientID, Company: r.Company, Board: r.Board, Ticket: r.Ticket})
	return nil
}

// TicketLinked records the ticket (its id in the PSA) an alert has in a
// channel, as soon as the PSA has answered with it, so that no later
// attempt creates a second one.
type TicketLinked struct {
	Header
	AlertID, ChannelID ID
	Ticket             string
	At                 int64
}

func (r *TicketLinked) fields(f *codec.Fields) {
	f.Walk(r.AlertID[:], r.ChannelID[:], &r.Ticket, &r.At)
}

func (r *TicketLinked) apply(w *Workspace) error {
	a := w.Alerts[r.AlertID]
	if a == nil {
		return fmt.Errorf("ticket of unknown alert %s", r.AlertID)
	}
	for i := range a.Tickets {
		if a.Tickets[i].ChannelID == r.ChannelID {
			a.Tickets[i].Ticket = r.Ticket
			return nil
		}
	}
	a.Tickets = append(a.Tickets, TicketLink{ChannelID: r.ChannelID, Ticket: r.Ticket})
	return nil
}
