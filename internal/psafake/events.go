package psafake

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// PDEvent is an event the PagerDuty fake accepted.
type PDEvent struct {
	RoutingKey  string         `json:"routing_key"`
	EventAction string         `json:"event_action"`
	DedupKey    string         `json:"dedup_key"`
	Payload     map[string]any `json:"payload"`
	Client      string         `json:"client"`
	ClientURL   string         `json:"client_url"`
	Links       []struct {
		Href string `json:"href"`
		Text string `json:"text"`
	} `json:"links"`
}

// PagerDuty is a fake Events API v2 (POST /v2/enqueue): it checks the
// routing key (32 characters, and the integration's), the event action,
// the dedup key's length and a trigger's payload (summary of at most 1024
// characters, source, severity one of critical, error, warning, info),
// answers 202 {"status":"success","message":"Event processed",
// "dedup_key"} or 400 {"status":"invalid event","message":"Event object
// is invalid","errors":[...]}.
type PagerDuty struct {
	Srv        *httptest.Server
	RoutingKey string

	mu     sync.Mutex
	events []PDEvent
}

// NewPagerDuty starts a fake whose integration has routing key
// "R0UT1NGKEYR0UT1NGKEYR0UT1NGKEY32".
func NewPagerDuty() *PagerDuty {
	f := &PagerDuty{RoutingKey: "R0UT1NGKEYR0UT1NGKEYR0UT1NGKEY32"}
	f.Srv = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

// URL is the enqueue endpoint.
func (f *PagerDuty) URL() string { return f.Srv.URL + "/v2/enqueue" }

// Events returns the events accepted.
func (f *PagerDuty) Events() []PDEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]PDEvent(nil), f.events...)
}

func pdInvalid(w http.ResponseWriter, errs ...string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"status": "invalid event", "message": "Event object is invalid", "errors": errs})
}

func (f *PagerDuty) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v2/enqueue" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var ev PDEvent
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || json.Unmarshal(body, &ev) != nil {
		pdInvalid(w, "The request body must be a JSON object")
		return
	}
	switch {
	case len(ev.RoutingKey) != 32:
		pdInvalid(w, "Length of 'routing_key' is incorrect (should be 32 characters)")
		return
	case ev.RoutingKey != f.RoutingKey:
		pdInvalid(w, "Invalid routing key")
		return
	case ev.EventAction != "trigger" && ev.EventAction != "acknowledge" && ev.EventAction != "resolve":
		pdInvalid(w, "'event_action' is invalid (must be one of the following: 'trigger', 'acknowledge' or 'resolve')")
		return
	case len(ev.DedupKey) > 255:
		pdInvalid(w, "'dedup_key' is too long (max 255 characters)")
		return
	case ev.EventAction != "trigger" && ev.DedupKey == "":
		pdInvalid(w, "'dedup_key' is missing and required for acknowledge and resolve events")
		return
	}
	if ev.EventAction == "trigger" {
		summary, _ := ev.Payload["summary"].(string)
		source, _ := ev.Payload["source"].(string)
		sev, _ := ev.Payload["severity"].(string)
		switch {
		case summary == "" || len([]rune(summary)) > 1024:
			pdInvalid(w, "'payload.summary' is missing or longer than 1024 characters")
			return
		case source == "":
			pdInvalid(w, "'payload.source' is missing or blank")
			return
		case sev != "critical" && sev != "error" && sev != "warning" && sev != "info":
			pdInvalid(w, "'payload.severity' is invalid (must be one of the following: 'critical', 'warning', 'error' or 'info')")
			return
		}
	}
	f.mu.Lock()
	f.events = append(f.events, ev)
	f.mu.Unlock()
	writeJSON(w, http.StatusAccepted, map[string]any{"status": "success", "message": "Event processed", "dedup_key": ev.DedupKey})
}

// Teams is a fake Teams Workflows webhook: it takes a message whose one
// attachment is an Adaptive Card (application/vnd.microsoft.card.adaptive)
// and answers 202, or 400 with {"error":{"code","message"}}.
type Teams struct {
	Srv *httptest.Server

	mu    sync.Mutex
	cards []map[string]any
}

// NewTeams starts the fake.
func NewTeams() *Teams {
	f := &Teams{}
	f.Srv = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

// URL is the workflow's address (its sig is the credential).
func (f *Teams) URL() string {
	return f.Srv.URL + "/workflows/1f2e/triggers/manual/paths/invoke?api-version=2016-06-01&sig=Zm9vYmFy"
}

// Cards returns the Adaptive Cards received.
func (f *Teams) Cards() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.cards...)
}

func (f *Teams) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		Type        string `json:"type"`
		Attachments []struct {
			ContentType string         `json:"contentType"`
			Content     map[string]any `json:"content"`
		} `json:"attachments"`
	}
	bad := func(m string) {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]string{"code": "InvalidRequestContent", "message": m}})
	}
	switch {
	case r.Method != http.MethodPost || r.URL.Query().Get("sig") != "Zm9vYmFy":
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]string{"code": "DirectApiAuthorizationRequired", "message": "The request must be authenticated"}})
		return
	case !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || json.Unmarshal(body, &msg) != nil:
		bad("The request content is not valid JSON")
		return
	case msg.Type != "message" || len(msg.Attachments) != 1 || msg.Attachments[0].ContentType != "application/vnd.microsoft.card.adaptive":
		bad("The message must carry one Adaptive Card attachment")
		return
	case msg.Attachments[0].Content["type"] != "AdaptiveCard" || msg.Attachments[0].Content["version"] == nil:
		bad("The attachment is not an Adaptive Card")
		return
	}
	f.mu.Lock()
	f.cards = append(f.cards, msg.Attachments[0].Content)
	f.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}
