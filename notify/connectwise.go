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
	b, err := c.do(ctx, http.MethodPost, "/service/tickets", t)
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

func (c *connectWise) note(ctx context.Context, ticket, text string, resolution bool) error {
	body := map[string]any{"text": text, "internalAnalysisFlag": !resolution, "detailDescriptionFlag": resolution, "resolutionFlag": resolution}
	_, err := c.do(ctx, http.MethodPost, "/service/tickets/"+url.PathEscape(ticket)+"/notes", body)
	return err
}

// patch replaces one reference field of ticket by name (JSON Patch).
func (c *connectWise) patch(ctx context.Context, ticket, path, name string) error {
	ops := []map[string]any{{"op": "replace", "path": path, "value": map[string]string{"name": name}}}
	_, err := c.do(ctx, http.MethodPatch, "/service/tickets/"+url.PathEscape(ticket), ops)
	return err
}

func (c *connectWise) raise(ctx context.Context, ticket string) error {
	if p := settingOf(c.ch, "raisedPriority"); p != "" {
		return c.patch(ctx, ticket, "priority", p)
	}
	return nil
}

func (c *connectWise) close(ctx context.Context, ticket string) error {
	return c.patch(ctx, ticket, "status", settingOf(c.ch, "closedStatus"))
}

// test reads the system's information, then the default company.
func (c *connectWise) test(ctx context.Context) (string, error) {
	b, err := c.do(ctx, http.MethodGet, "/system/info", nil)
	if err != nil {
		return "", err
	}
	var info struct {
		Version string `json:"version"`
	}
	_ = jsonx.Unmarshal(b, &info)
	q := url.Values{"conditions": {`identifier="` + settingOf(c.ch, "defaultCompany") + `"`}, "fields": {"id,name"}}
	b, err = c.do(ctx, http.MethodGet, "/company/companies?"+q.Encode(), nil)
	if err != nil {
		return "", err
	}
	var list []struct {
		Name string `json:"name"`
	}
	if jsonx.Unmarshal(b, &list) != nil || len(list) == 0 {
		return "", &RemoteError{Status: http.StatusNotFound, Message: "no company with identifier " + strconv.Quote(settingOf(c.ch, "defaultCompany"))}
	}
	return "ConnectWise " + info.Version + ", default company " + list[0].Name, nil
}
