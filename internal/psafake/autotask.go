package psafake

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ATTicket is a ticket the Autotask fake keeps.
type ATTicket struct {
	ID                                   int64
	Title, Description, ExternalID       string
	CompanyID, QueueID, Priority, Status int64
	TicketType                           int64
	Notes                                []ATNote
}

// ATNote is a note of an Autotask ticket.
type ATNote struct {
	Title, Description string
	NoteType, Publish  int64
}

// Autotask is a fake Autotask REST API: the zone lookup
// (GET /atservicesrest/v1.0/zoneInformation?user=, no credentials), and
// under /ATServicesRest/V1.0 the ApiIntegrationCode, UserName and Secret
// headers on every request (401 otherwise), tickets queried by a filter
// (POST /Tickets/query), created (POST /Tickets: {"itemId"}), updated
// (PATCH /Tickets with the id), noted (POST /Tickets/{id}/Notes), and a
// company read (GET /Companies/{id}); refusals carry {"errors":[...]}.
type Autotask struct {
	Srv                               *httptest.Server
	Username, IntegrationCode, Secret string
	Companies                         map[int64]string

	mu          sync.Mutex
	zoneLookups int
	tickets     []*ATTicket
}

// NewAutotask starts a fake with companies 174 ("Acme Corporation") and 0
// is refused; 3 ("Catchall") is the default's.
func NewAutotask() *Autotask {
	f := &Autotask{Username: "api-backupmon@mymsp.example", IntegrationCode: "ABCDEFGHIJKLMNOPQRSTUVWXYZ1", Secret: "at-secret", Companies: map[int64]string{174: "Acme Corporation", 3: "Catchall"}}
	f.Srv = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

// ZoneURL is where the zone lookup is served (a channel's settings.zoneUrl).
func (f *Autotask) ZoneURL() string { return f.Srv.URL + "/atservicesrest" }

// ZoneLookups returns how many zone lookups came.
func (f *Autotask) ZoneLookups() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.zoneLookups
}

// Tickets returns copies of the tickets made.
func (f *Autotask) Tickets() []ATTicket {
	return copies(&f.mu, f.tickets, func(t ATTicket) ATTicket { t.Notes = slices.Clone(t.Notes); return t })
}

func atErrors(w http.ResponseWriter, status int, msgs ...string) {
	writeJSON(w, status, map[string]any{"errors": msgs})
}

// atID reads the id between prefix and suffix of path, or -1.
func atID(path, prefix, suffix string) int64 {
	rest, ok := strings.CutPrefix(path, prefix)
	if rest, ok2 := strings.CutSuffix(rest, suffix); ok && ok2 {
		if id, err := strconv.ParseInt(rest, 10, 64); err == nil && id > 0 {
			return id
		}
	}
	return -1
}

func (f *Autotask) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path == "/atservicesrest/v1.0/zoneInformation" && r.Method == http.MethodGet {
		f.zoneLookups++
		if r.URL.Query().Get("user") != f.Username {
			atErrors(w, http.StatusNotFound, "Zone information could not be determined for the user")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"zoneName": "Fake zone", "url": f.Srv.URL + "/ATServicesRest/", "webUrl": f.Srv.URL + "/", "ci": 1})
		return
	}
	path, ok := strings.CutPrefix(r.URL.Path, "/ATServicesRest/V1.0")
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("ApiIntegrationCode") != f.IntegrationCode || r.Header.Get("UserName") != f.Username || r.Header.Get("Secret") != f.Secret {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if len(body) > 0 && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		atErrors(w, http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return
	}
	switch {
	case path == "/Tickets/query" && r.Method == http.MethodPost:
		f.query(w, body)
	case path == "/Tickets" && r.Method == http.MethodPost:
		f.create(w, body)
	case path == "/Tickets" && r.Method == http.MethodPatch:
		f.update(w, body)
	case atID(path, "/Tickets/", "/Notes") > 0 && r.Method == http.MethodPost:
		f.note(w, f.ticket(atID(path, "/Tickets/", "/Notes")), body)
	case atID(path, "/Companies/", "") > 0 && r.Method == http.MethodGet:
		id := atID(path, "/Companies/", "")
		name, ok := f.Companies[id]
		if !ok {
			writeJSON(w, http.StatusOK, map[string]any{"item": nil})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"item": map[string]any{"id": id, "companyName": name}})
	default:
		http.NotFound(w, r)
	}
}

func (f *Autotask) ticket(id int64) *ATTicket {
	return find(f.tickets, func(t *ATTicket) bool { return t.ID == id })
}

func (f *Autotask) query(w http.ResponseWriter, body []byte) {
	var q struct {
		Filter []struct {
			Op, Field string
			Value     any
		} `json:"filter"`
	}
	if json.Unmarshal(body, &q) != nil || len(q.Filter) != 1 || q.Filter[0].Op != "eq" || !strings.EqualFold(q.Filter[0].Field, "externalID") {
		atErrors(w, http.StatusBadRequest, "The query must filter on externalID with op eq")
		return
	}
	items := []map[string]any{}
	for _, t := range f.tickets {
		if t.ExternalID == q.Filter[0].Value {
			items = append(items, map[string]any{"id": t.ID, "externalID": t.ExternalID, "title": t.Title})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "pageDetails": map[string]any{"count": len(items), "requestCount": 500, "prevPageUrl": nil, "nextPageUrl": nil}})
}

func (f *Autotask) create(w http.ResponseWriter, body []byte) {
	var in struct {
		CompanyID   int64  `json:"companyID"`
		QueueID     int64  `json:"queueID"`
		Title       string `json:"title"`
		Description string `json:"description"`
		ExternalID  string `json:"externalID"`
		Priority    int64  `json:"priority"`
		Status      int64  `json:"status"`
		TicketType  int64  `json:"ticketType"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		atErrors(w, http.StatusBadRequest, err.Error())
		return
	}
	switch {
	case in.Title == "" || len([]rune(in.Title)) > 255:
		atErrors(w, http.StatusBadRequest, "title is required and at most 255 characters")
		return
	case in.Status == 0 || in.Priority == 0:
		atErrors(w, http.StatusBadRequest, "status and priority are required")
		return
	case in.QueueID == 0:
		atErrors(w, http.StatusBadRequest, "A ticket needs a queueID or an assignedResourceID")
		return
	}
	if _, ok := f.Companies[in.CompanyID]; !ok {
		atErrors(w, http.StatusBadRequest, "companyID "+strconv.FormatInt(in.CompanyID, 10)+" does not exist")
		return
	}
	t := &ATTicket{ID: 7000 + int64(len(f.tickets)) + 1, Title: in.Title, Description: in.Description, ExternalID: in.ExternalID,
		CompanyID: in.CompanyID, QueueID: in.QueueID, Priority: in.Priority, Status: in.Status, TicketType: in.TicketType}
	f.tickets = append(f.tickets, t)
	writeJSON(w, http.StatusOK, map[string]any{"itemId": t.ID})
}

func (f *Autotask) update(w http.ResponseWriter, body []byte) {
	var in map[string]int64
	if json.Unmarshal(body, &in) != nil {
		atErrors(w, http.StatusBadRequest, "The body must be a ticket with its id")
		return
	}
	t := f.ticket(in["id"])
	if t == nil {
		atErrors(w, http.StatusNotFound, "Ticket not found")
		return
	}
	if v, ok := in["status"]; ok {
		t.Status = v
	}
	if v, ok := in["priority"]; ok {
		t.Priority = v
	}
	writeJSON(w, http.StatusOK, map[string]any{"itemId": t.ID})
}

func (f *Autotask) note(w http.ResponseWriter, t *ATTicket, body []byte) {
	if t == nil {
		atErrors(w, http.StatusNotFound, "Ticket not found")
		return
	}
	var in ATNote
	if json.Unmarshal(body, &in) != nil || in.Title == "" || in.Description == "" || in.NoteType == 0 || in.Publish == 0 {
		atErrors(w, http.StatusBadRequest, "title, description, noteType and publish are required")
		return
	}
	t.Notes = append(t.Notes, in)
	writeJSON(w, http.StatusOK, map[string]any{"itemId": len(t.Notes)})
}
