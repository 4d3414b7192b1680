package notify

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"backupmon/engine"
	"backupmon/jsonx"
)

// HaloPSA API (decisions.md 7, the pages cited there): an OAuth 2 token by
// the client-credentials grant from the authorisation server (POST
// <authUrl>/token, form grant_type, client_id, client_secret, scope=all,
// ?tenant= for hosted instances), used as a Bearer token until it expires
// (expires_in) or the resource server answers 401; tickets are created and
// updated by POSTing arrays to /Tickets, notes to /Actions, and found again
// by searching for our alert id, which ends the summary.

// haloSummaryMax is the most characters a ticket's summary is given.
const haloSummaryMax = 255

// haloTokenMargin: a token is renewed this long before it expires.
const haloTokenMargin = time.Minute

// haloToken is a kept access token and when it stops being used.
type haloToken struct {
	value string
	until time.Time
}

type haloPSA struct {
	n  *Notifier
	ch engine.NoticeChannel
}

func (h *haloPSA) base() string { return strings.TrimRight(settingOf(h.ch, "url"), "/") }

// tokenKey names the kept token of this channel's credentials.
func (h *haloPSA) tokenKey() string {
	return h.ch.ID.String() + "\x00" + settingOf(h.ch, "authUrl") + "\x00" + settingOf(h.ch, "clientId")
}

// haloMessage reads HaloPSA's error bodies: OAuth's {"error",
// "error_description"} and the API's {"message"} or a plain string.
func haloMessage(b []byte) string {
	if m := jsonMessage(b, "error_description", "message", "Message", "error"); m != "" {
		return m
	}
	var s string
	if jsonx.Unmarshal(b, &s) == nil {
		return s
	}
	return ""
}

// token returns a valid access token, asking for a new one when none is
// kept, the kept one is about to expire, or fresh is set.
func (h *haloPSA) token(ctx context.Context, fresh bool) (string, error) {
	key := h.tokenKey()
	if v, ok := h.n.tokens.Load(key); ok && !fresh {
		if t := v.(haloToken); h.n.now().Before(t.until) {
			return t.value, nil
		}
	}
	u := strings.TrimRight(settingOf(h.ch, "authUrl"), "/") + "/token"
	if tenant := settingOf(h.ch, "tenant"); tenant != "" {
		u += "?" + url.Values{"tenant": {tenant}}.Encode()
	}
	form := url.Values{
		"grant_type": {"client_credentials"}, "client_id": {settingOf(h.ch, "clientId")},
		"client_secret": {secretOf(h.ch, "clientSecret")}, "scope": {"all"},
	}
	b, err := h.n.call(ctx, apiRequest{method: http.MethodPost, url: u, body: []byte(form.Encode()), form: true}, haloMessage)
	if err != nil {
		return "", &stepError{step: "getting a token", err: err}
	}
	var t struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if jsonx.Unmarshal(b, &t) != nil || t.AccessToken == "" {
		return "", errors.New("getting a token: the answer carries no access_token")
	}
	life := time.Duration(t.ExpiresIn)*time.Second - haloTokenMargin
	h.n.tokens.Store(key, haloToken{value: t.AccessToken, until: h.n.now().Add(life)})
	return t.AccessToken, nil
}

// do calls the resource server with the kept token; a 401 gets one more
// try with a new token.
func (h *haloPSA) do(ctx context.Context, method, path string, body any) ([]byte, error) {
	for fresh := false; ; fresh = true {
		tok, err := h.token(ctx, fresh)
		if err != nil {
			return nil, err
		}
		req := apiRequest{method: method, url: h.base() + path, header: http.Header{"Authorization": {"Bearer " + tok}}}
		if body != nil {
			req.body = jsonBody(body)
		}
		b, err := h.n.call(ctx, req, haloMessage)
		var re *RemoteError
		if !fresh && errors.As(err, &re) && re.Status == http.StatusUnauthorized {
			continue
		}
		return b, err
	}
}

// haloRef is what ends a ticket's summary, so that a search by the alert
// id finds it.
func haloRef(alertID string) string { return " [backupmon " + alertID + "]" }

func (h *haloPSA) find(ctx context.Context, alertID string) (string, error) {
	b, err := h.do(ctx, http.MethodGet, "/Tickets?"+url.Values{"search": {alertID}}.Encode(), nil)
	if err != nil {
		return "", err
	}
	var res struct {
		Tickets []struct {
			ID      int64  `json:"id"`
			Summary string `json:"summary"`
		} `json:"tickets"`
	}
	if jsonx.Unmarshal(b, &res) != nil {
		return "", errNoID
	}
	for _, t := range res.Tickets {
		if strings.HasSuffix(t.Summary, haloRef(alertID)) {
			return strconv.FormatInt(t.ID, 10), nil
		}
	}
	return "", nil
}

func (h *haloPSA) create(ctx context.Context, nt engine.Notice, f facts) (string, error) {
	ref := haloRef(nt.AlertID.String())
	t := map[string]any{
		"summary":   truncate(headline(nt), haloSummaryMax-len([]rune(ref))) + ref,
		"details":   ticketDescription(nt, f),
		"client_id": number(nt.Channel.Company),
	}
	if nt.Channel.TicketType != "" {
		t["tickettype_id"] = number(nt.Channel.TicketType)
	}
	if p := settingOf(h.ch, "priority"); p != "" {
		t["priority_id"] = number(p)
	}
	return madeID(h.do(ctx, http.MethodPost, "/Tickets", []any{t}))
}

func (h *haloPSA) note(ctx context.Context, ticket, text string, resolution bool) error {
	a := map[string]any{"ticket_id": number(ticket), "outcome": "backupmon", "note": text, "hiddenfromuser": !resolution}
	_, err := h.do(ctx, http.MethodPost, "/Actions", []any{a})
	return err
}

// updateOf sets the status or the priority of ticket (POST of the ticket
// with its id).
func (h *haloPSA) updateOf(ticket string, field ticketField, value string) (string, string, any) {
	name := [...]string{fieldStatus: "status_id", fieldPriority: "priority_id"}[field]
	return http.MethodPost, "/Tickets", []any{map[string]any{"id": number(ticket), name: number(value)}}
}

// test gets a token and reads the default client.
func (h *haloPSA) test(ctx context.Context) (string, error) {
	id := settingOf(h.ch, "defaultCompany")
	name, err := readName(ctx, h, "/Client/"+url.PathEscape(id), "no client "+id, "name")
	if err != nil {
		return "", err
	}
	return "HaloPSA token granted, default client " + name, nil
}
