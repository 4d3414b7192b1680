package notify

import (
	"context"
	"errors"

	"backupmon/engine"
	"backupmon/state"
)

// One ticket per alert in a PSA: the steps every PSA takes, whatever its
// API (connectwise.go, autotask.go, halopsa.go).

// psa is one PSA channel's API, for one notice.
type psa interface {
	// find returns the ticket made for alert id, or "" when there is none.
	find(ctx context.Context, alertID string) (string, error)
	// create makes the alert's ticket and returns its id.
	create(ctx context.Context, nt engine.Notice, f facts) (string, error)
	// note adds text to ticket; resolution marks the recovery note.
	note(ctx context.Context, ticket, text string, resolution bool) error
	// raise sets ticket's priority to the channel's raised priority
	// (nothing when the channel has none).
	raise(ctx context.Context, ticket string) error
	// close sets ticket's status to the channel's closing status.
	close(ctx context.Context, ticket string) error
	// test checks the credentials and the default company and returns
	// what the PSA answered.
	test(ctx context.Context) (string, error)
}

// psaFor returns the API of nt's channel, or nil when it is no PSA.
func (n *Notifier) psaFor(nt engine.Notice) psa {
	switch nt.Channel.Type {
	case engine.ChannelConnectWise:
		return &connectWise{n: n, ch: nt.Channel}
	case engine.ChannelAutotask:
		return &autotask{n: n, ch: nt.Channel}
	case engine.ChannelHaloPSA:
		return &haloPSA{n: n, ch: nt.Channel}
	}
	return nil
}

// sendTicket makes nt's event happen to the alert's ticket: the ticket is
// the one the engine keeps, else the one the PSA finds by the alert's id,
// else a new one (not for a resolve: nothing to close). It returns the
// ticket, even with an error of a later step, so that the engine keeps it.
func (n *Notifier) sendTicket(ctx context.Context, nt engine.Notice) (ticket string, err error) {
	p := n.psaFor(nt)
	ticket = nt.Channel.Ticket
	created := false
	if ticket == "" {
		if ticket, err = p.find(ctx, nt.AlertID.String()); err != nil {
			return "", &stepError{step: "finding the alert's ticket", err: err}
		}
	}
	if ticket == "" {
		if nt.Event == engine.EventResolved {
			return "", nil // no ticket was made: none to close
		}
		if ticket, err = p.create(ctx, nt, noticeFacts(nt, n.dashboard)); err != nil {
			return "", &stepError{step: "creating the ticket", err: err}
		}
		created = true
	}
	switch nt.Event {
	case engine.EventOpened:
		if !created {
			return ticket, nil // made by an earlier attempt whose answer was lost
		}
	case engine.EventRaised:
		if err := p.note(ctx, ticket, eventNote(nt), false); err != nil {
			return ticket, &stepError{step: "adding the note", err: err}
		}
		if err := p.raise(ctx, ticket); err != nil {
			return ticket, &stepError{step: "raising the priority", err: err}
		}
	case engine.EventResolved:
		if err := p.note(ctx, ticket, eventNote(nt), true); err != nil {
			return ticket, &stepError{step: "adding the recovery note", err: err}
		}
		if err := p.close(ctx, ticket); err != nil {
			return ticket, &stepError{step: "closing the ticket", err: err}
		}
	default: // escalated, acknowledged, snoozed
		if err := p.note(ctx, ticket, eventNote(nt), false); err != nil {
			return ticket, &stepError{step: "adding the note", err: err}
		}
	}
	return ticket, nil
}

// settingOf returns the channel setting key ("" when not set).
func settingOf(ch engine.NoticeChannel, key string) string { return state.Lookup(ch.Settings, key) }

// secretOf returns the channel secret key ("" when not set).
func secretOf(ch engine.NoticeChannel, key string) string { return state.Lookup(ch.Secrets, key) }

// errNoID is the failure of a PSA answer without the id of what it made.
var errNoID = errors.New("the answer carries no id")
