package notify

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"backupmon/engine"
	"backupmon/jsonx"
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
	// do calls the PSA's API: method on path (under its base) with body
	// as JSON (nil none); it returns the answer of a 2xx.
	do(ctx context.Context, method, path string, body any) ([]byte, error)
	// updateOf is the call that sets ticket's status or priority to
	// value, as the channel's settings name it.
	updateOf(ticket string, field ticketField, value string) (method, path string, body any)
	// test checks the credentials and the default company and returns
	// what the PSA answered.
	test(ctx context.Context) (string, error)
}

// psaFor returns the API of nt's channel, or nil when it is no PSA.
func (n *Notifier) psaFor(nt engine.Notice) psa {
	switch nt.Channel.Type {
	case state.ChannelConnectWise:
		return &connectWise{n: n, ch: nt.Channel}
	case state.ChannelAutotask:
		return &autotask{n: n, ch: nt.Channel}
	case state.ChannelHaloPSA:
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
		if v := settingOf(nt.Channel, "raisedPriority"); v != "" {
			if err := update(ctx, p, ticket, fieldPriority, v); err != nil {
				return ticket, &stepError{step: "raising the priority", err: err}
			}
		}
	case engine.EventResolved:
		if err := p.note(ctx, ticket, eventNote(nt), true); err != nil {
			return ticket, &stepError{step: "adding the recovery note", err: err}
		}
		if err := update(ctx, p, ticket, fieldStatus, closedStatus(nt.Channel)); err != nil {
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

// Failures of a PSA answer without what it should carry.
var (
	errNoID  = errors.New("the answer carries no id")
	errNoURL = errors.New("the answer carries no url")
)

// number is an id setting as a JSON number (settings are checked
// positive integers when the channel is made).
func number(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// itemID reads the id of what an Autotask create made: {"itemId": n}.
func itemID(b []byte) (string, error) {
	var made struct {
		ItemID int64 `json:"itemId"`
	}
	if jsonx.Unmarshal(b, &made) != nil || made.ItemID == 0 {
		return "", errNoID
	}
	return strconv.FormatInt(made.ItemID, 10), nil
}

// ticketField is a field of a ticket that an event changes.
type ticketField uint8

const (
	fieldStatus   ticketField = iota // closed on resolve
	fieldPriority                    // raised on raise
)

// closedStatus is the status a resolve sets: the channel's, or Autotask's
// Complete when an Autotask channel names none.
func closedStatus(ch engine.NoticeChannel) string {
	if v := settingOf(ch, "closedStatus"); v != "" || ch.Type != state.ChannelAutotask {
		return v
	}
	return atStatusComplete
}

// madeID reads the id of what a create made from its answer, {"id": n}
// (ConnectWise's ticket, HaloPSA's).
func madeID(b []byte, err error) (string, error) {
	if err != nil {
		return "", err
	}
	var made struct {
		ID int64 `json:"id"`
	}
	if jsonx.Unmarshal(b, &made) != nil || made.ID == 0 {
		return "", errNoID
	}
	return strconv.FormatInt(made.ID, 10), nil
}

// update sets ticket's field to value in p.
func update(ctx context.Context, p psa, ticket string, field ticketField, value string) error {
	method, path, body := p.updateOf(ticket, field, value)
	_, err := p.do(ctx, method, path, body)
	return err
}

// readName GETs path from p and returns the string at keys (nested
// objects) in its answer; without one, a 404 RemoteError saying none.
func readName(ctx context.Context, p psa, path, none string, keys ...string) (string, error) {
	b, err := p.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return "", err
	}
	for _, k := range keys {
		var m map[string]jsonx.RawMessage
		if jsonx.Unmarshal(b, &m) != nil || m[k] == nil {
			return "", &RemoteError{Status: http.StatusNotFound, Message: none}
		}
		b = m[k]
	}
	var name string
	if jsonx.Unmarshal(b, &name) != nil {
		return "", &RemoteError{Status: http.StatusNotFound, Message: none}
	}
	return name, nil
}

// idText is a PSA's numeric id as the engine keeps it.
func idText(id int64) string { return strconv.FormatInt(id, 10) }
