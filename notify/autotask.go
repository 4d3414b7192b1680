package notify

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"backupmon/engine"
	"backupmon/jsonx"
)

// Autotask PSA REST API v1.0 (decisions.md 7, the pages cited there): the
// ApiIntegrationCode, UserName and Secret headers on every request; the
// zone's address read first from zoneInformation by the user name;
// tickets under /V1.0/Tickets, found again by externalID (our alert id).

// DefaultAutotaskZoneURL is where an Autotask user's zone is looked up.
const DefaultAutotaskZoneURL = "https://webservices.autotask.net/atservicesrest"

// Autotask limits: a ticket's title, a note's title.
const (
	atTitleMax     = 255
	atNoteTitleMax = 250
)

// Autotask defaults: the status of a new ticket (New) and the closing one
// (Complete).
const (
	atStatusNew      = "1"
	atStatusComplete = "5"
)

type autotask struct {
	n    *Notifier
	ch   engine.NoticeChannel
	base string // the zone's REST address, with /V1.0
}

func (a *autotask) header() http.Header {
	return http.Header{
		"Apiintegrationcode": {settingOf(a.ch, "integrationCode")},
		"Username":           {settingOf(a.ch, "username")},
		"Secret":             {secretOf(a.ch, "secret")},
	}
}

// atMessage reads Autotask's error body: {"errors":["..."]}.
func atMessage(b []byte) string {
	var e struct {
		Errors []string `json:"errors"`
	}
	if jsonx.Unmarshal(b, &e) != nil || len(e.Errors) == 0 {
		return jsonMessage(b, "message", "Message")
	}
	return strings.Join(e.Errors, "; ")
}

// zone returns the REST address of the user's zone, looked up once per
// zone URL and user name.
func (a *autotask) zone(ctx context.Context) (string, error) {
	if a.base != "" {
		return a.base, nil
	}
	lookup := settingOf(a.ch, "zoneUrl")
	if lookup == "" {
		lookup = DefaultAutotaskZoneURL
	}
	user := settingOf(a.ch, "username")
	key := lookup + "\x00" + user
	if v, ok := a.n.zones.Load(key); ok {
		a.base = v.(string)
		return a.base, nil
	}
	u := strings.TrimRight(lookup, "/") + "/v1.0/zoneInformation?" + url.Values{"user": {user}}.Encode()
	b, err := a.n.call(ctx, apiRequest{method: http.MethodGet, url: u}, atMessage)
	if err != nil {
		return "", &stepError{step: "looking up the zone", err: err}
	}
	var z struct {
		URL string `json:"url"`
	}
	if jsonx.Unmarshal(b, &z) != nil || z.URL == "" {
		return "", &stepError{step: "looking up the zone", err: errNoURL}
	}
	a.base = strings.TrimRight(z.URL, "/") + "/V1.0"
	a.n.zones.Store(key, a.base)
	return a.base, nil
}

func (a *autotask) do(ctx context.Context, method, path string, body any) ([]byte, error) {
	base, err := a.zone(ctx)
	if err != nil {
		return nil, err
	}
	req := apiRequest{method: method, url: base + path, header: a.header()}
	if body != nil {
		req.body = jsonBody(body)
	}
	return a.n.call(ctx, req, atMessage)
}

func (a *autotask) find(ctx context.Context, alertID string) (string, error) {
	q := map[string]any{"filter": []map[string]any{{"op": "eq", "field": "externalID", "value": alertID}}}
	b, err := a.do(ctx, http.MethodPost, "/Tickets/query", q)
	if err != nil {
		return "", err
	}
	var res struct {
		Items []struct {
			ID int64 `json:"id"`
		} `json:"items"`
	}
	if jsonx.Unmarshal(b, &res) != nil {
		return "", errNoID
	}
	if len(res.Items) == 0 {
		return "", nil
	}
	return idText(res.Items[0].ID), nil
}

func (a *autotask) create(ctx context.Context, nt engine.Notice, f facts) (string, error) {
	status := settingOf(a.ch, "status")
	if status == "" {
		status = atStatusNew
	}
	t := map[string]any{
		"companyID":   number(nt.Channel.Company),
		"queueID":     number(nt.Channel.Board),
		"title":       truncate(headline(nt), atTitleMax),
		"description": truncate(ticketDescription(nt, f), 8000),
		"externalID":  nt.AlertID.String(),
		"priority":    number(settingOf(a.ch, "priority")),
		"status":      number(status),
	}
	if nt.Channel.TicketType != "" {
		t["ticketType"] = number(nt.Channel.TicketType)
	}
	b, err := a.do(ctx, http.MethodPost, "/Tickets", t)
	if err != nil {
		return "", err
	}
	return itemID(b)
}

func (a *autotask) note(ctx context.Context, ticket, text string, resolution bool) error {
	title := "backupmon"
	if first, _, _ := strings.Cut(text, "\n"); first != "" {
		title = truncate(first, atNoteTitleMax)
	}
	body := map[string]any{"title": title, "description": text, "noteType": 1, "publish": 1}
	_, err := a.do(ctx, http.MethodPost, "/Tickets/"+url.PathEscape(ticket)+"/Notes", body)
	return err
}

// updateOf sets the status or the priority of ticket (PATCH of the
// entity with its id).
func (a *autotask) updateOf(ticket string, field ticketField, value string) (string, string, any) {
	name := [...]string{fieldStatus: "status", fieldPriority: "priority"}[field]
	return http.MethodPatch, "/Tickets", map[string]any{"id": number(ticket), name: number(value)}
}

// test looks the zone up and reads the default company.
func (a *autotask) test(ctx context.Context) (string, error) {
	id := settingOf(a.ch, "defaultCompany")
	name, err := readName(ctx, a, "/Companies/"+url.PathEscape(id), "no company "+id, "item", "companyName")
	if err != nil {
		return "", err
	}
	return "Autotask zone " + a.base + ", default company " + name, nil
}
