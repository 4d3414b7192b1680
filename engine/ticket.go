package engine

import (
	"backupmon/state"
)

// The outbox's side of the channels that follow an alert: what an attempt
// needs to know (the ticket the alert has, the client's company), and the
// outcome of an attempt that made a ticket or failed for good.

// ticketTarget adds to notice n of delivery d, bound for a channel of
// issue 23, the channel's settings and secrets, the ticket the alert
// already has in it, and the PSA company of the alert's client.
func (w *workspace) ticketTarget(n *state.Notice, d *state.Delivery) {
	c := w.Channel(d.ChannelID)
	if c == nil {
		return
	}
	n.AlertID = d.AlertID
	n.Channel.Settings, n.Channel.Secrets = c.Settings, c.Secrets
	if !state.IsPSA(c.Type) {
		return
	}
	if al := w.Alerts[d.AlertID]; al != nil {
		n.Channel.Ticket = al.TicketOf(c.ID)
	}
	n.Channel.Company = state.Lookup(c.Settings, "defaultCompany")
	n.Channel.Board = state.Lookup(c.Settings, boardKey(c.Type))
	n.Channel.TicketType = state.Lookup(c.Settings, "ticketType")
	if j := w.Jobs[d.JobID]; j != nil {
		if m := c.MapOf(j.Client.ID); m != nil {
			n.Channel.Mapped = true
			n.Channel.Company = m.Company
			if m.Board != "" {
				n.Channel.Board = m.Board
			}
			if m.Ticket != "" {
				n.Channel.TicketType = m.Ticket
			}
		}
	}
}

// boardKey is the setting that names where a PSA's new tickets go: a
// ConnectWise board, an Autotask queue; HaloPSA has none (its ticket type
// routes).
func boardKey(channelType string) string {
	if channelType == state.ChannelAutotask {
		return "queue"
	}
	return "board"
}

// Outcome is what one delivery attempt came to: Failure "" when the
// channel took the notice, else why not; Permanent when the remote answer
// says no retry can succeed (bad credentials, an unknown company), which
// fails the delivery at once; Ticket the id of the ticket the attempt
// found or made in a PSA ("" none), recorded with the alert whatever the
// failure.
type Outcome struct {
	Failure   string
	Permanent bool
	Ticket    string
}

// maxTicketChars bounds a ticket id kept with an alert.
const maxTicketChars = 100

// DeliveryOutcome records the outcome of one attempt the deliverer made,
// as DeliveryDone does, and first the ticket it made (even for an attempt
// no longer in flight: the ticket exists in the PSA all the same). It
// returns an error only for an unknown workspace.
func (e *Engine) DeliveryOutcome(wsID, deliveryID state.ID, attempt int, o Outcome) error {
	a := e.actor(wsID)
	if a == nil {
		return notFound("workspace")
	}
	if len(o.Failure) > 500 {
		o.Failure = o.Failure[:500]
	}
	if len(o.Ticket) > maxTicketChars {
		o.Ticket = ""
	}
	a.send(func(w *workspace) {
		d := w.DeliveryIx[deliveryID]
		if d == nil {
			return
		}
		now := e.nowMs()
		if o.Ticket != "" {
			if al := w.Alerts[d.AlertID]; al != nil && w.Channel(d.ChannelID) != nil && al.TicketOf(d.ChannelID) != o.Ticket {
				a.commit(&state.TicketLinked{AlertID: d.AlertID, ChannelID: d.ChannelID, Ticket: o.Ticket, At: now})
			}
		}
		if d.State != state.DeliveryPending || !d.InFlight || attempt != d.Attempts+1 {
			return
		}
		rec := w.decideAttempt(d, attempt, o.Failure, now)
		if o.Failure != "" && o.Permanent {
			rec.State, rec.NextAt = state.DeliveryFailed, 0
		}
		a.commit(rec)
	})
	return nil
}

// ChannelTestNotice returns the notice of a test of channel chID: the
// channel as an attempt sees it and a made-up alert of the workspace's
// first client, or a KindNotFound error.
func (e *Engine) ChannelTestNotice(wsID, chID string) (Notice, error) {
	type answer struct {
		n   Notice
		err error
	}
	ans, err := read(e, wsID, func(w *workspace) answer {
		id, err := lookup(chID, "channel", func(id state.ID) bool { return w.Channel(id) != nil })
		if err != nil {
			return answer{err: err}
		}
		c := w.Channel(id)
		n := Notice{
			Workspace: w.ID, Event: EventTest, Attempt: 1, Channel: w.noticeChannel(id),
			WorkspaceName: w.Name, ClientName: "Test client", JobName: "Test job", AlertType: "failed",
			Severity: "warning", Summary: "This is a test notification from backupmon.", SizeBytes: -1, DurationSeconds: -1,
		}
		state.RandomBytes(n.Delivery[:]) // a test is no delivery of the outbox
		n.AlertID = n.Delivery
		n.Channel.Settings, n.Channel.Secrets = c.Settings, c.Secrets
		n.Channel.Company = state.Lookup(c.Settings, "defaultCompany")
		n.Channel.Board = state.Lookup(c.Settings, boardKey(c.Type))
		n.Channel.TicketType = state.Lookup(c.Settings, "ticketType")
		return answer{n: n}
	})
	if err != nil {
		return Notice{}, err
	}
	return ans.n, ans.err
}
