package engine

import (
	"encoding/hex"
	"net/mail"
	"net/url"
	"strings"

	"backupmon/state"
)

// Commands of notifications: channels, escalation rules, and the outcome of
// a delivery attempt.

// ChannelInput is the body of POST /workspaces/{wid}/channels.
type ChannelInput struct {
	Type, Name, URL, To, MinSeverity Opt[string]
	// Settings and Secrets configure the channel types of cmd_psa.go
	// (nil when absent); secrets are never shown again.
	Settings, Secrets map[string]string
	// Actor is who creates it, for the activity log ("" is the admin API).
	Actor string
}

// EscalationInput is the body of POST /workspaces/{wid}/escalations.
type EscalationInput struct {
	ChannelID    Opt[string]
	AfterMinutes Opt[int64]
	// Actor is who creates it, for the activity log ("" is the admin API).
	Actor string
}

// maxEscalationMinutes bounds afterMinutes (30 days).
const maxEscalationMinutes = 43200

// maxChannels and maxEscalations bound a workspace's channels and rules
// (and so the deliveries one record makes).
const (
	maxChannels    = 100
	maxEscalations = 100
)

// checkChannel validates a channel body: a webhook or slack channel needs
// an http(s) url, an e-mail channel one address in to.
func checkChannel(in ChannelInput) (minSev uint8, err *Error) {
	if err := checkEnum("type", in.Type, channelTypes, channelTypeList, true); err != nil {
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
	if _, ok := channelSpecs[in.Type.V]; ok {
		return minSev, nil // checked by ticketChannel
	}
	if in.Settings != nil || in.Secrets != nil {
		return 0, invalid("settings", "settings and secrets are not for %s channels", in.Type.V)
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
	if _, ok := channelSpecs[in.Type.V]; ok {
		return e.createTicketChannel(a, in, minSev)
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

// DeleteChannel removes a channel with its escalation rules; its pending
// deliveries are cancelled.
func (e *Engine) DeleteChannel(wsID, channelID, actor string) error {
	return e.remove(wsID, actor, func(w *workspace) (state.ID, error) {
		return lookup(channelID, "channel", func(id state.ID) bool { return w.Channel(id) != nil })
	}, func(r state.Removal) state.Record { return &state.ChannelDeleted{Removal: r} })
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

// DeleteEscalation removes an escalation rule.
func (e *Engine) DeleteEscalation(wsID, escalationID, actor string) error {
	return e.remove(wsID, actor, func(w *workspace) (state.ID, error) {
		return lookup(escalationID, "escalation", func(id state.ID) bool { return w.Escalation(id) != nil })
	}, func(r state.Removal) state.Record { return &state.EscalationDeleted{Removal: r} })
}

// DeliveryDone records the outcome of one attempt the deliverer made:
// failure is "" when the channel took the notice, else why it did not. An
// outcome for an attempt that is no longer in flight (it timed out, or the
// delivery was cancelled) changes nothing. It returns an error only for an
// unknown workspace.
func (e *Engine) DeliveryDone(wsID, deliveryID state.ID, attempt int, failure string) error {
	a := e.actor(wsID)
	if a == nil {
		return notFound("workspace")
	}
	if len(failure) > 500 {
		failure = failure[:500]
	}
	a.send(func(w *workspace) {
		d := w.DeliveryIx[deliveryID]
		if d == nil || d.State != state.DeliveryPending || !d.InFlight || attempt != d.Attempts+1 {
			return
		}
		a.commit(w.decideAttempt(d, attempt, failure, e.nowMs()))
	})
	return nil
}
