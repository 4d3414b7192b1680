package notify

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"backupmon/engine"
	"backupmon/jsonx"
)

// ConnectWise PSA (Manage) REST API 3.0 (decisions.md 7, the pages cited
// there): Basic authentication with "<company>+<public key>:<private
// key>", the clientId header on every request, tickets under
// /service/tickets, found again by externalXRef (our alert id).

// cwSummaryMax is the most characters a ticket's summary takes
// (MaxLengthField: "The field summary must be a string with a maximum
// length of 100.").
const cwSummaryMax = 100

type connectWise struct {
	n  *Notifier
	ch engine.NoticeChannel
}

func (c *connectWise) base() string { return strings.TrimRight(settingOf(c.ch, "url"), "/") }

func (c *connectWise) header() http.Header {
	cred := settingOf(c.ch, "company") + "+" + settingOf(c.ch, "publicKey") + ":" + secretOf(c.ch, "privateKey")
	return http.Header{
		"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte(cred))},
		"Clientid":      {settingOf(c.ch, "clientId")},
	}
}

// cwMessage reads ConnectWise's error body: {"code","message","errors":
// [{"code","message","resource","field"}]}, the first detail after the
// message.
func cwMessage(b []byte) string {
	var e struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Errors  []struct {
			Message string `json:"message"`
			Field   string `json:"field"`
		} `json:"errors"`
	}
	if jsonx.Unmarshal(b, &e) != nil {
		return ""
	}
	msg := e.Message
	if e.Code != "" && msg != "" {
		msg = e.Code + ": " + msg
	}
	if len(e.Errors) > 0 && e.Errors[0].Message != "" {
		msg += " (" + e.Errors[0].Message + ")"
	}
	return msg
}

func (c *connectWise) do(ctx context.Context, method, path string, body any) ([]byte, error) {
	req := apiRequest{method: method, url: c.base() + path, header: c.header()}
	if body != nil {
		req.body = jsonBody(body)
	}
	return c.n.call(ctx, req, cwMessage)
}

func (c *connectWise) find(ctx context.Context, alertID string) (string, error) {
	q := url.Values{"conditions": {`externalXRef="` + alertID + `"`}, "fields": {"id"}, "pageSize": {"1"}}
	b, err := c.do(ctx, http.MethodGet, "/service/tickets?"+q.Encode(), nil)
	if err != nil {
		return "", err
	}
	var list []struct {
		ID int64 `json:"id"`
	}
	if err := jsonx.Unmarshal(b, &list); err != nil {
		return "", errNoID
	}
	if len(list) == 0 {
		return "", nil
	}
	return strconv.FormatInt(list[0].ID, 10), nil
}

func (c *connectWise) create(ctx context.Context, nt engine.Notice, f facts) (string, error) {
	t := map[string]any{
		"summary":            truncate(headline(nt), cwSummaryMax),
		"initialDescription": ticketDescription(nt, f),
		"externalXRef":       nt.AlertID.String(),
		"company":            map[string]string{"identifier": nt.Channel.Company},
		"board":              map[string]string{"name": nt.Channel.Board},
	}
	if nt.Channel.TicketType != "" {
		t["type"] = map[string]string{"name": nt.Channel.TicketType}
	}
	if p := settingOf(c.ch, "priority"); p != "" {
		t["priority"] = map[string]string{"name": p}
	}
	return madeID(c.do(ctx, http.MethodPost, "/service/tickets", t))
}

func (c *connectWise) note(ctx context.Context, ticket, text string, resolution bool) error {
	body := map[string]any{"text": text, "internalAnalysisFlag": !resolution, "detailDescriptionFlag": resolution, "resolutionFlag": resolution}
	_, err := c.do(ctx, http.MethodPost, "/service/tickets/"+url.PathEscape(ticket)+"/notes", body)
	return err
}

// updateOf replaces the status or the priority of ticket by name (JSON
// Patch).
func (c *connectWise) updateOf(ticket string, field ticketField, name string) (string, string, any) {
	path := [...]string{fieldStatus: "status", fieldPriority: "priority"}[field]
	return http.MethodPatch, "/service/tickets/" + url.PathEscape(ticket), []map[string]any{{"op": "replace", "path": path, "value": map[string]string{"name": name}}}
}

// test reads the system's information, then the default company.
func (c *connectWise) test(ctx context.Context) (string, error) {
	version, err := readName(ctx, c, "/system/info", "no version in /system/info", "version")
	if err != nil {
		return "", err
	}
	id := settingOf(c.ch, "defaultCompany")
	q := url.Values{"conditions": {`identifier="` + id + `"`}, "fields": {"id,name"}}
	b, err := c.do(ctx, http.MethodGet, "/company/companies?"+q.Encode(), nil)
	if err != nil {
		return "", err
	}
	var list []struct {
		Name string `json:"name"`
	}
	if jsonx.Unmarshal(b, &list) != nil || len(list) == 0 {
		return "", &RemoteError{Status: http.StatusNotFound, Message: "no company with identifier " + id}
	}
	return "ConnectWise " + version + ", default company " + list[0].Name, nil
}
