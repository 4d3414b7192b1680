package engine

import (
	"encoding/hex"
	"net/mail"
	"net/url"
	"strings"

	"backupmon/state"
)

// ChannelInput is the body of POST /workspaces/{wid}/channels.
type ChannelInput struct {
	Type, Name, URL, To, MinSeverity Opt[string]
	// Actor is who creates it, for the activity log ("" is the admin API).
	Actor string
}

// ChannelView is a channel record (decisions.md 7); Secret is set only in
// the answer to its creation (webhook channels).
type ChannelView struct {
	ID          string     `json:"id"`
	Type        string     `json:"type"`
	Name        string     `json:"name"`
	URL         *string    `json:"url"`
	To          *string    `json:"to"`
	MinSeverity string     `json:"minSeverity"`
	CreatedAt   state.Time `json:"createdAt"`
	Secret      string     `json:"secret,omitempty"`
}

// EscalationInput is the body of POST /workspaces/{wid}/escalations.
type EscalationInput struct {
	ChannelID    Opt[string]
	AfterMinutes Opt[int64]
	// Actor is who creates it, for the activity log ("" is the admin API).
	Actor string
}

// EscalationView is an escalation rule record.
type EscalationView struct {
	ID           string     `json:"id"`
	ChannelID    string     `json:"channelId"`
	AfterMinutes int64      `json:"afterMinutes"`
	CreatedAt    state.Time `json:"createdAt"`
}

// DeliveryView is a notification delivery with its state: pending,
// delivered, failed (given up after 24 hours) or cancelled.
type DeliveryView struct {
	ID            string         `json:"id"`
	ChannelID     string         `json:"channelId"`
	Event         string         `json:"event"`
	AlertID       string         `json:"alertId"`
	JobID         string         `json:"jobId"`
	State         string         `json:"state"`
	Attempts      int            `json:"attempts"`
	CreatedAt     state.Time     `json:"createdAt"`
	LastAttemptAt state.NullTime `json:"lastAttemptAt"`
	NextAttemptAt state.NullTime `json:"nextAttemptAt"`
	DeliveredAt   state.NullTime `json:"deliveredAt"`
	LastError     *string        `json:"lastError"`
}

// maxEscalationMinutes bounds afterMinutes (30 days).
const maxEscalationMinutes = 43200

// maxChannels and maxEscalations bound a workspace's channels and rules
// (and so the deliveries one record makes).
const (
	maxChannels    = 100
	maxEscalations = 100
)

func channelView(c *state.Channel) ChannelView {
	v := ChannelView{ID: c.ID.String(), Type: c.Type, Name: c.Name, MinSeverity: state.SeverityName(c.MinSeverity), CreatedAt: state.Time(c.CreatedAt)}
	if c.URL != "" {
		u := c.URL
		v.URL = &u
	}
	if c.To != "" {
		t := c.To
		v.To = &t
	}
	return v
}

func deliveryView(d *state.Delivery) DeliveryView {
	v := DeliveryView{
		ID: d.ID.String(), ChannelID: d.ChannelID.String(), Event: d.Event, AlertID: d.AlertID.String(), JobID: d.JobID.String(),
		Attempts: d.Attempts, CreatedAt: state.Time(d.CreatedAt), LastAttemptAt: state.NullTime(d.LastAttemptAt), DeliveredAt: state.NullTime(d.DeliveredAt),
	}
	switch d.State {
	case state.DeliveryPending:
		v.State = "pending"
		if !d.InFlight {
			v.NextAttemptAt = state.NullTime(d.NextAt)
		}
	case state.DeliveryDelivered:
		v.State = "delivered"
	case state.DeliveryFailed:
		v.State = "failed"
	case state.DeliveryCancelled:
		v.State = "cancelled"
	}
	if d.LastError != "" {
		e := d.LastError
		v.LastError = &e
	}
	return v
}

// checkChannel validates a channel body: a webhook or slack channel needs
// an http(s) url, an e-mail channel one address in to.
func checkChannel(in ChannelInput) (minSev uint8, err *Error) {
	if err := checkEnum("type", in.Type, map[string]bool{state.ChannelWebhook: true, state.ChannelSlack: true, state.ChannelEmail: true}, "webhook, slack, email", true); err != nil {
		return 0, err
	}
	if err := checkName("name", in.Name, true); err != nil {
		return 0, err
	}
	minSev = state.SeverityWarning
	if in.MinSeverity.Set {
		if err := checkEnum("minSeverity", in.MinSeverity, map[string]bool{"warning": true, "critical": true}, "warning, critical", false); err != nil {
			return 0, err
		}
		if in.MinSeverity.V == "critical" {
			minSev = state.SeverityCritical
		}
	}
	if in.Type.V == state.ChannelEmail {
		if in.URL.Set && !in.URL.Null {
			return 0, invalid("url", "url is only for webhook and slack channels")
		}
		if !in.To.Set || in.To.Null || !validAddress(in.To.V) {
			return 0, invalid("to", "to must be one e-mail address")
		}
		return minSev, nil
	}
	if in.To.Set && !in.To.Null {
		return 0, invalid("to", "to is only for email channels")
	}
	if !in.URL.Set || in.URL.Null || !validURL(in.URL.V) {
		return 0, invalid("url", "url must be an absolute http or https URL")
	}
	return minSev, nil
}

func validURL(s string) bool {
	if len(s) > 2048 || strings.ContainsAny(s, " \r\n\t") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil
}

func validAddress(s string) bool {
	if len(s) > 254 || strings.ContainsAny(s, "\r\n<>,") {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Name == "" && a.Address == s
}

// CreateChannel adds a notification channel. A webhook channel's answer
// carries its signing secret, shown only here. It returns a KindInvalid
// error naming the field at fault.
func (e *Engine) CreateChannel(wsID string, in ChannelInput) (ChannelView, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return ChannelView{}, err
	}
	minSev, verr := checkChannel(in)
	if verr != nil {
		return ChannelView{}, verr
	}
	if check := e.opts.CheckChannelURL; check != nil && in.Type.V != ChannelEmail {
		if err := check(in.URL.V); err != nil {
			return ChannelView{}, invalid("url", "%s", err.Error())
		}
	}
	var secret string
	if in.Type.V == state.ChannelWebhook {
		var raw [32]byte
		state.RandomBytes(raw[:])
		secret = "whsec_" + hex.EncodeToString(raw[:])
	}
	return change(a, func(w *workspace, now int64) (decision[ChannelView], error) {
		if len(w.Channels) >= maxChannels {
			return decision[ChannelView]{}, conflict("a workspace has at most %d channels", maxChannels)
		}
		rec := &state.ChannelCreated{
			ID: w.IDs.Next(now), ChannelType: in.Type.V, Name: in.Name.V, URL: in.URL.V, To: in.To.V,
			Secret: secret, MinSeverity: minSev, CreatedAt: now,
		}
		rec.ActivityID, rec.Actor = w.IDs.Next(now), in.Actor
		return decision[ChannelView]{rec: rec, answer: func(w *workspace) ChannelView {
			v := channelView(w.Channel(rec.ID))
			v.Secret = secret
			return v
		}}, nil
	})
}

// Channels returns the workspace's channels, oldest first, without secrets.
func (e *Engine) Channels(wsID string) ([]ChannelView, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return nil, err
	}
	return ask(a, func(w *workspace) []ChannelView {
		list := make([]ChannelView, len(w.Channels))
		for i, c := range w.Channels {
			list[i] = channelView(c)
		}
		return list
	}), nil
}

// DeleteChannel removes a channel with its escalation rules; its pending
// deliveries are cancelled.
func (e *Engine) DeleteChannel(wsID, channelID, actor string) error {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return err
	}
	_, err = change(a, func(w *workspace, now int64) (decision[struct{}], error) {
		id, ok := state.ParseID(channelID)
		if !ok || w.Channel(id) == nil {
			return decision[struct{}]{}, notFound("channel")
		}
		return decision[struct{}]{rec: &state.ChannelDeleted{Removal: state.Removal{ID: id, ActivityID: w.IDs.Next(now), At: now, Actor: actor}}}, nil
	})
	return err
}

// CreateEscalation adds an escalation rule: an alert still open
// afterMinutes (1..43200) after it opened notifies the channel.
func (e *Engine) CreateEscalation(wsID string, in EscalationInput) (EscalationView, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return EscalationView{}, err
	}
	if !in.ChannelID.Set || in.ChannelID.Null {
		return EscalationView{}, invalid("channelId", "channelId is required")
	}
	if !in.AfterMinutes.Set || in.AfterMinutes.Null || in.AfterMinutes.V < 1 || in.AfterMinutes.V > maxEscalationMinutes {
		return EscalationView{}, invalid("afterMinutes", "afterMinutes must be an integer from 1 to %d", maxEscalationMinutes)
	}
	return change(a, func(w *workspace, now int64) (decision[EscalationView], error) {
		cid, ok := state.ParseID(in.ChannelID.V)
		if !ok || w.Channel(cid) == nil {
			return decision[EscalationView]{}, invalid("channelId", "channelId does not name a channel of this workspace")
		}
		if len(w.Escalations) >= maxEscalations {
			return decision[EscalationView]{}, conflict("a workspace has at most %d escalation rules", maxEscalations)
		}
		rec := &state.EscalationCreated{ID: w.IDs.Next(now), ChannelID: cid, AfterMinutes: in.AfterMinutes.V, CreatedAt: now}
		rec.ActivityID, rec.Actor = w.IDs.Next(now), in.Actor
		return decision[EscalationView]{rec: rec, answer: func(w *workspace) EscalationView {
			return escalationView(w.Escalation(rec.ID))
		}}, nil
	})
}

func escalationView(r *state.Escalation) EscalationView {
	return EscalationView{ID: r.ID.String(), ChannelID: r.ChannelID.String(), AfterMinutes: r.AfterMinutes, CreatedAt: state.Time(r.CreatedAt)}
}

// Escalations returns the workspace's escalation rules by afterMinutes.
func (e *Engine) Escalations(wsID string) ([]EscalationView, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return nil, err
	}
	return ask(a, func(w *workspace) []EscalationView {
		list := make([]EscalationView, len(w.Escalations))
		for i, r := range w.Escalations {
			list[i] = escalationView(r)
		}
		return list
	}), nil
}

// DeleteEscalation removes an escalation rule.
func (e *Engine) DeleteEscalation(wsID, escalationID, actor string) error {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return err
	}
	_, err = change(a, func(w *workspace, now int64) (decision[struct{}], error) {
		id, ok := state.ParseID(escalationID)
		if !ok || w.Escalation(id) == nil {
			return decision[struct{}]{}, notFound("escalation")
		}
		return decision[struct{}]{rec: &state.EscalationDeleted{Removal: state.Removal{ID: id, ActivityID: w.IDs.Next(now), At: now, Actor: actor}}}, nil
	})
	return err
}

// Deliveries returns the workspace's notification deliveries, newest first.
func (e *Engine) Deliveries(wsID string) ([]DeliveryView, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return nil, err
	}
	return ask(a, func(w *workspace) []DeliveryView {
		list := make([]DeliveryView, 0, len(w.Deliveries))
		for i := len(w.Deliveries) - 1; i >= 0; i-- {
			list = append(list, deliveryView(w.Deliveries[i]))
		}
		return list
	}), nil
}
