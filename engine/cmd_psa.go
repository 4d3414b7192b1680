package engine

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"backupmon/jsonx"
	"backupmon/state"
)

// Commands of the channels that follow an alert in another system (PSA
// tickets, PagerDuty incidents) and of Teams: their settings, the clients'
// PSA companies, the ticket an attempt made, and a channel's test.

// EventTest is the event of a channel's test notice (ChannelTestNotice).
const EventTest = "test"

// settingKind says what a setting's value must be.
type settingKind uint8

const (
	kindText   settingKind = iota
	kindURL                // an absolute http(s) URL, checked like a webhook's
	kindNumber             // a positive integer (a PSA's id)
)

// settingSpec is one setting or secret a channel type takes.
type settingSpec struct {
	key      string
	required bool
	kind     settingKind
}

// channelSpec is what a channel type of issue 23 takes: its settings
// (shown in channel records) and its secrets (never shown).
type channelSpec struct{ settings, secrets []settingSpec }

// channelSpecs lists the settings of each channel type of issue 23
// (decisions.md 7, "PSA, Teams and PagerDuty channels").
var channelSpecs = map[string]channelSpec{
	state.ChannelConnectWise: {
		settings: []settingSpec{
			{"url", true, kindURL}, {"company", true, kindText}, {"publicKey", true, kindText}, {"clientId", true, kindText},
			{"defaultCompany", true, kindText}, {"board", true, kindText}, {"closedStatus", true, kindText},
			{"ticketType", false, kindText}, {"priority", false, kindText}, {"raisedPriority", false, kindText},
		},
		secrets: []settingSpec{{"privateKey", true, kindText}},
	},
	state.ChannelAutotask: {
		settings: []settingSpec{
			{"username", true, kindText}, {"integrationCode", true, kindText}, {"zoneUrl", false, kindURL},
			{"defaultCompany", true, kindNumber}, {"queue", true, kindNumber}, {"priority", true, kindNumber},
			{"status", false, kindNumber}, {"closedStatus", false, kindNumber}, {"ticketType", false, kindNumber},
			{"raisedPriority", false, kindNumber},
		},
		secrets: []settingSpec{{"secret", true, kindText}},
	},
	state.ChannelHaloPSA: {
		settings: []settingSpec{
			{"url", true, kindURL}, {"authUrl", true, kindURL}, {"tenant", false, kindText}, {"clientId", true, kindText},
			{"defaultCompany", true, kindNumber}, {"closedStatus", true, kindNumber}, {"ticketType", false, kindNumber},
			{"priority", false, kindNumber}, {"raisedPriority", false, kindNumber},
		},
		secrets: []settingSpec{{"clientSecret", true, kindText}},
	},
	state.ChannelTeams:     {secrets: []settingSpec{{"url", true, kindURL}}},
	state.ChannelPagerDuty: {settings: []settingSpec{{"url", false, kindURL}}, secrets: []settingSpec{{"routingKey", true, kindText}}},
}

// maxSettingChars bounds a setting's or secret's value.
const maxSettingChars = 2048

// checkSettings validates the settings (or secrets, under name) of a
// channel type against specs and returns them in the specs' order.
func checkSettings(name string, given map[string]string, specs []settingSpec, checkURL func(string) error) ([]state.Setting, *Error) {
	for _, k := range slices.Sorted(maps.Keys(given)) {
		if !slices.ContainsFunc(specs, func(s settingSpec) bool { return s.key == k }) {
			return nil, invalid(name+"."+k, "unknown field %q", name+"."+k)
		}
	}
	var out []state.Setting
	for _, s := range specs {
		field := name + "." + s.key
		v, ok := given[s.key]
		v = strings.TrimSpace(v)
		if !ok || v == "" {
			if s.required {
				return nil, invalid(field, "%s is required", field)
			}
			continue
		}
		if utf8.RuneCountInString(v) > maxSettingChars || strings.ContainsAny(v, "\r\n") {
			return nil, invalid(field, "%s must be one line of at most %d characters", field, maxSettingChars)
		}
		if err := checkText(field, v); err != nil {
			return nil, err
		}
		switch s.kind {
		case kindURL:
			if !validURL(v) {
				return nil, invalid(field, "%s must be an absolute http or https URL", field)
			}
			if checkURL != nil {
				if err := checkURL(v); err != nil {
					msg := err.Error() // "url must not point at an internal address: ..."
					if rest, ok := strings.CutPrefix(msg, "url "); ok {
						msg = field + " " + rest
					}
					return nil, invalid(field, "%s", msg)
				}
			}
		case kindNumber:
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 1 {
				return nil, invalid(field, "%s must be a positive integer (the id in the PSA)", field)
			}
		}
		out = append(out, state.Setting{Key: s.key, Value: v})
	}
	return out, nil
}

// ticketChannel checks the body of a channel of issue 23 and returns its
// record, not yet given ids.
func (e *Engine) ticketChannel(in ChannelInput, minSev uint8) (*state.TicketChannelCreated, *Error) {
	spec := channelSpecs[in.Type.V]
	if in.URL.Set && !in.URL.Null {
		return nil, invalid("url", "url is only for webhook and slack channels (this type takes settings and secrets)")
	}
	if in.To.Set && !in.To.Null {
		return nil, invalid("to", "to is only for email channels")
	}
	settings, err := checkSettings("settings", in.Settings, spec.settings, e.opts.CheckChannelURL)
	if err != nil {
		return nil, err
	}
	secrets, err := checkSettings("secrets", in.Secrets, spec.secrets, e.opts.CheckChannelURL)
	if err != nil {
		return nil, err
	}
	if in.Type.V == state.ChannelPagerDuty && len(state.Lookup(secrets, "routingKey")) != 32 {
		// Events API v2: "Length of 'routing_key' is incorrect (should be 32 characters)".
		return nil, invalid("secrets.routingKey", "secrets.routingKey must be the 32-character integration key of an Events API v2 integration")
	}
	rec := &state.TicketChannelCreated{Settings: settings, Secrets: secrets}
	rec.ChannelType, rec.Name, rec.MinSeverity = in.Type.V, in.Name.V, minSev
	return rec, nil
}

// ClientMapInput is the body of PUT .../channels/{chid}/clients/{cid}.
type ClientMapInput struct {
	Company, Board, TicketType Opt[string]
}

// ClientMapView is one client's PSA company in a channel: Mapped false
// when it has none and the channel's default company takes its tickets;
// Company, Board and TicketType are "" where not set (null in JSON).
type ClientMapView struct {
	ClientID, ClientName       string
	Mapped                     bool
	Company, Board, TicketType string
}

// MarshalJSON writes {clientId, clientName, mapped, company, board,
// ticketType}, null for a value not set.
func (v ClientMapView) MarshalJSON() ([]byte, error) {
	b := append([]byte(`{"clientId":`), jsonString(v.ClientID)...)
	b = append(append(b, `,"clientName":`...), jsonString(v.ClientName)...)
	b = strconv.AppendBool(append(b, `,"mapped":`...), v.Mapped)
	for _, f := range [...][2]string{{"company", v.Company}, {"board", v.Board}, {"ticketType", v.TicketType}} {
		b = append(append(b, `,"`+f[0]+`":`...), jsonString(f[1])...)
	}
	return append(b, '}'), nil
}

// jsonString is s as a JSON string, or null when empty.
func jsonString(s string) []byte {
	if s == "" {
		return []byte("null")
	}
	return jsonx.AppendString(nil, s)
}

func clientMapView(c *state.Client, m *state.ClientMap) ClientMapView {
	v := ClientMapView{ClientID: c.ID.String(), ClientName: c.Name}
	if m != nil {
		v.Mapped, v.Company, v.Board, v.TicketType = true, m.Company, m.Board, m.Ticket
	}
	return v
}

// psaChannel finds a PSA channel of the workspace by its id, or answers
// 404 (no such channel) or 400 (a channel without client mappings).
func (w *workspace) psaChannel(raw string) (*state.Channel, error) {
	id, err := lookup(raw, "channel", func(id state.ID) bool { return w.Channel(id) != nil })
	if err != nil {
		return nil, err
	}
	c := w.Channel(id)
	if !state.IsPSA(c.Type) {
		return nil, invalid("channel", "only connectwise, autotask and halopsa channels map clients to companies")
	}
	return c, nil
}

// ClientMaps returns every client of the workspace, by name, with its
// company in PSA channel chID (Mapped false: the channel's default).
func (e *Engine) ClientMaps(wsID, chID string) ([]ClientMapView, error) {
	type answer struct {
		list []ClientMapView
		err  error
	}
	a, err := read(e, wsID, func(w *workspace) answer {
		c, err := w.psaChannel(chID)
		if err != nil {
			return answer{err: err}
		}
		clients := slices.Collect(maps.Values(w.Clients))
		slices.SortFunc(clients, func(x, y *state.Client) int {
			if n := strings.Compare(strings.ToLower(x.Name), strings.ToLower(y.Name)); n != 0 {
				return n
			}
			return strings.Compare(x.ID.String(), y.ID.String())
		})
		list := make([]ClientMapView, 0, len(clients))
		for _, cl := range clients {
			list = append(list, clientMapView(cl, c.MapOf(cl.ID)))
		}
		return answer{list: list}
	})
	if err != nil {
		return nil, err
	}
	return a.list, a.err
}

// MapClient sets client cID's company (and board or queue, ticket type)
// in PSA channel chID; a null or absent company is refused (DELETE removes
// a mapping). It returns the mapping.
func (e *Engine) MapClient(wsID, chID, cID string, in ClientMapInput) (ClientMapView, error) {
	if err := checkName("company", in.Company, true); err != nil {
		return ClientMapView{}, err
	}
	for _, f := range []struct {
		name string
		v    Opt[string]
	}{{"board", in.Board}, {"ticketType", in.TicketType}} {
		if err := checkName(f.name, f.v, false); err != nil {
			return ClientMapView{}, err
		}
	}
	return command(e, wsID, func(w *workspace, now int64) (decision[ClientMapView], error) {
		rec, err := w.clientMapped(chID, cID, now)
		if err != nil {
			return decision[ClientMapView]{}, err
		}
		if err := checkMapIDs(w.Channel(rec.ChannelID).Type, in); err != nil {
			return decision[ClientMapView]{}, err
		}
		rec.Company, rec.Board, rec.Ticket = strings.TrimSpace(in.Company.V), strings.TrimSpace(in.Board.V), strings.TrimSpace(in.TicketType.V)
		return decision[ClientMapView]{rec: rec, answer: func(w *workspace) ClientMapView {
			return clientMapView(w.Clients[rec.ClientID], w.Channel(rec.ChannelID).MapOf(rec.ClientID))
		}}, nil
	})
}

// UnmapClient removes client cID's mapping in PSA channel chID: its
// tickets go to the channel's default company.
func (e *Engine) UnmapClient(wsID, chID, cID string) error {
	_, err := command(e, wsID, func(w *workspace, now int64) (decision[struct{}], error) {
		rec, err := w.clientMapped(chID, cID, now)
		if err != nil {
			return decision[struct{}]{}, err
		}
		if w.Channel(rec.ChannelID).MapOf(rec.ClientID) == nil {
			return decision[struct{}]{}, nil
		}
		return decision[struct{}]{rec: rec}, nil
	})
	return err
}

// clientMapped starts the record of a mapping change: the channel and the
// client, checked.
func (w *workspace) clientMapped(chID, cID string, now int64) (*state.ClientMapped, error) {
	c, err := w.psaChannel(chID)
	if err != nil {
		return nil, err
	}
	clientID, err := lookup(cID, "client", func(id state.ID) bool { return w.Clients[id] != nil })
	if err != nil {
		return nil, err
	}
	return &state.ClientMapped{ChannelID: c.ID, ClientID: clientID, At: now}, nil
}

// checkMapIDs refuses a mapping whose values are not ids where the PSA
// names companies, queues and ticket types by number (Autotask, HaloPSA);
// ConnectWise takes the company's identifier and the board's and type's
// names.
func checkMapIDs(channelType string, in ClientMapInput) *Error {
	if channelType == state.ChannelConnectWise {
		return nil
	}
	for _, f := range []struct {
		name string
		v    Opt[string]
	}{{"company", in.Company}, {"board", in.Board}, {"ticketType", in.TicketType}} {
		if !f.v.Set || f.v.Null {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(f.v.V), 10, 64); err != nil || n < 1 {
			return invalid(f.name, "%s must be a positive integer (the id in the PSA)", f.name)
		}
	}
	return nil
}

// channelTypes are the channel types a workspace can create.
var channelTypes = map[string]bool{
	state.ChannelWebhook: true, state.ChannelSlack: true, state.ChannelEmail: true,
	state.ChannelConnectWise: true, state.ChannelAutotask: true, state.ChannelHaloPSA: true, state.ChannelTeams: true, state.ChannelPagerDuty: true,
}

const channelTypeList = "webhook, slack, email, connectwise, autotask, halopsa, teams, pagerduty"

// createTicketChannel creates a channel of issue 23 (CreateChannel).
func (e *Engine) createTicketChannel(a *actor, in ChannelInput, minSev uint8) (ChannelView, error) {
	rec, verr := e.ticketChannel(in, minSev)
	if verr != nil {
		return ChannelView{}, verr
	}
	return change(a, func(w *workspace, now int64) (decision[ChannelView], error) {
		if len(w.Channels) >= maxChannels {
			return decision[ChannelView]{}, conflict("a workspace has at most %d channels", maxChannels)
		}
		rec.ID, rec.CreatedAt = w.IDs.Next(now), now
		rec.ActivityID, rec.Actor = w.IDs.Next(now), in.Actor
		return decision[ChannelView]{rec: rec, answer: func(w *workspace) ChannelView {
			return channelView(w.Channel(rec.ID))
		}}, nil
	})
}
