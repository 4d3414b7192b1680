package dashboard

import (
	"net/url"
	"strings"

	"github.com/valyala/fasthttp"

	"backupmon/engine"
	"backupmon/state"
)

// The dashboard's side of the channels of issue 23: the forms that add a
// ConnectWise, Autotask, HaloPSA, Teams or PagerDuty channel (owners
// only: they hold credentials), a channel's test, and a PSA channel's
// client-to-company page, where an unmapped client shows as such.

// psaField is one input of a channel form: a setting or a secret.
type psaField struct {
	Name, Label, Hint string // Name: settings.<key> or secrets.<key>
	Required, Secret  bool
}

// psaForm is the form that adds a channel of one type.
type psaForm struct {
	Type, Title string
	Fields      []psaField
}

func req(name, label, hint string) psaField {
	return psaField{Name: name, Label: label, Hint: hint, Required: true}
}
func opt(name, label, hint string) psaField { return psaField{Name: name, Label: label, Hint: hint} }
func sec(name, label string) psaField {
	return psaField{Name: name, Label: label, Required: true, Secret: true}
}

// psaForms are the forms of the channel types of issue 23, in the order
// of the page.
var psaForms = []psaForm{
	{state.ChannelConnectWise, "ConnectWise PSA", []psaField{
		req("settings.url", "API URL", "https://api-na.myconnectwise.net/v4_6_release/apis/3.0"),
		req("settings.company", "Company ID (as at login)", ""), req("settings.publicKey", "Public key", ""),
		sec("secrets.privateKey", "Private key"), req("settings.clientId", "clientId", "from developer.connectwise.com"),
		req("settings.defaultCompany", "Default company (identifier)", "for unmapped clients"), req("settings.board", "Board", "Service Desk"),
		req("settings.closedStatus", "Closing status", "Closed (resolved)"), opt("settings.ticketType", "Ticket type", ""),
		opt("settings.priority", "Priority", ""), opt("settings.raisedPriority", "Priority once raised", ""),
	}},
	{state.ChannelAutotask, "Autotask", []psaField{
		req("settings.username", "API user name", ""), req("settings.integrationCode", "API integration code", ""),
		sec("secrets.secret", "Secret"), opt("settings.zoneUrl", "Zone lookup URL", "https://webservices.autotask.net/atservicesrest"),
		req("settings.defaultCompany", "Default company id", "for unmapped clients"), req("settings.queue", "Queue id", ""),
		req("settings.priority", "Priority id", ""), opt("settings.raisedPriority", "Priority id once raised", ""),
		opt("settings.status", "New ticket status id", "1"), opt("settings.closedStatus", "Closing status id", "5"),
		opt("settings.ticketType", "Ticket type id", ""),
	}},
	{state.ChannelHaloPSA, "HaloPSA", []psaField{
		req("settings.url", "Resource server", "https://yourcompany.halopsa.com/api"),
		req("settings.authUrl", "Authorisation server", "https://yourcompany.halopsa.com/auth"),
		opt("settings.tenant", "Tenant", "hosted instances"), req("settings.clientId", "Client ID", ""), sec("secrets.clientSecret", "Client secret"),
		req("settings.defaultCompany", "Default client id", "for unmapped clients"), req("settings.closedStatus", "Closing status id", ""),
		opt("settings.ticketType", "Ticket type id", ""), opt("settings.priority", "Priority id", ""), opt("settings.raisedPriority", "Priority id once raised", ""),
	}},
	{state.ChannelTeams, "Microsoft Teams", []psaField{sec("secrets.url", "Workflows (or incoming webhook) URL")}},
	{state.ChannelPagerDuty, "PagerDuty", []psaField{
		sec("secrets.routingKey", "Integration key (Events API v2)"), opt("settings.url", "Events API URL", "https://events.pagerduty.com/v2/enqueue"),
	}},
}

// isNewType reports whether channel type t is one of psaForms'.
func isNewType(t string) bool {
	for _, f := range psaForms {
		if f.Type == t {
			return true
		}
	}
	return false
}

// isPSA reports whether channel type t maps clients to companies.
func isPSA(t string) bool {
	return t == state.ChannelConnectWise || t == state.ChannelAutotask || t == state.ChannelHaloPSA
}

// channelMaps reads a channel form's settings.* and secrets.* fields.
func channelMaps(args *fasthttp.Args) (settings, secrets map[string]string) {
	for k, v := range args.All() {
		val := strings.TrimSpace(string(v))
		if val == "" {
			continue
		}
		if key, ok := strings.CutPrefix(string(k), "settings."); ok {
			if settings == nil {
				settings = map[string]string{}
			}
			settings[key] = val
		} else if key, ok := strings.CutPrefix(string(k), "secrets."); ok {
			if secrets == nil {
				secrets = map[string]string{}
			}
			secrets[key] = val
		}
	}
	return settings, secrets
}

// testChannel sends a channel's test and shows what the remote answered.
func (s *Server) testChannel(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	n, err := s.eng.ChannelTestNotice(u.Workspace.ID, ctx.UserValue("chid").(string))
	if err != nil || s.test == nil {
		msg := "tests are not available on this server"
		if err != nil {
			msg = engine.ErrorText(err)
		}
		redirect(ctx, "/settings/channels", "Not tested: "+msg+".", true)
		return
	}
	ok, answer := s.test(n)
	if !ok {
		redirect(ctx, "/settings/channels", "Test of "+n.Channel.Name+" failed: "+answer, true)
		return
	}
	redirect(ctx, "/settings/channels", "Test of "+n.Channel.Name+" sent: "+answer, false)
}

// psaClientRow is a client on a PSA channel's page.
type psaClientRow struct {
	ID, Name                   string
	Mapped                     bool
	Company, Board, TicketType string
}

type psaClientsData struct {
	Channel engine.ChannelView
	Default string // the channel's default company
	Clients []psaClientRow
	Owner   bool
}

// psaClientsPage (/settings/companies?channel=<id>) shows every client of
// the workspace with its company in a PSA channel, the unmapped ones
// marked.
func (s *Server) psaClientsPage(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	chID := string(ctx.QueryArgs().Peek("channel"))
	list, err := s.eng.ClientMaps(u.Workspace.ID, chID)
	if s.failed(ctx, err) {
		return
	}
	chs, err := s.eng.Channels(u.Workspace.ID)
	if s.failed(ctx, err) {
		return
	}
	d := psaClientsData{Owner: allowed(u.Role, canOwn)}
	for _, c := range chs {
		if c.ID == chID {
			d.Channel, d.Default = c, c.Settings["defaultCompany"]
		}
	}
	for _, m := range list {
		d.Clients = append(d.Clients, psaClientRow{ID: m.ClientID, Name: m.ClientName, Mapped: m.Mapped, Company: m.Company, Board: m.Board, TicketType: m.TicketType})
	}
	s.render(ctx, fasthttp.StatusOK, "psaclients", s.newView(ctx, u, "Companies of "+d.Channel.Name, "settings", d))
}

// mapClient sets or (with unmap) removes a client's company.
func (s *Server) mapClient(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	chID, cID := ctx.UserValue("chid").(string), ctx.UserValue("cid").(string)
	back := "/settings/companies?channel=" + url.QueryEscape(chID)
	args := ctx.PostArgs()
	if string(args.Peek("unmap")) != "" {
		err := s.eng.UnmapClient(u.Workspace.ID, chID, cID)
		redirectAfter(ctx, back, err, "Not changed", "The client's tickets go to the default company.")
		return
	}
	in := engine.ClientMapInput{Company: optional(args, "company"), Board: optional(args, "board"), TicketType: optional(args, "ticketType")}
	_, err := s.eng.MapClient(u.Workspace.ID, chID, cID, in)
	redirectAfter(ctx, back, err, "Not saved", "Company saved.")
}
