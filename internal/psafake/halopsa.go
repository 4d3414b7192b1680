package psafake

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// HaloTicket is a ticket the HaloPSA fake keeps.
type HaloTicket struct {
	ID                                     int
	Summary, Details                       string
	ClientID, TypeID, PriorityID, StatusID int
	Actions                                []HaloAction
}

// HaloAction is a note (an action) on a HaloPSA ticket.
type HaloAction struct {
	Note, Outcome string
	Hidden        bool
}

// HaloPSA is a fake HaloPSA: the authorisation server under /auth (POST
// /auth/token, form grant_type=client_credentials with client_id,
// client_secret and scope, ?tenant=), the resource server under /api
// (Bearer token; 401 for one it did not grant or has revoked): tickets
// searched (GET /api/Tickets?search=), created and updated (POST of an
// array to /api/Tickets), actions (POST of an array to /api/Actions), a
// client read (GET /api/Client/{id}).
type HaloPSA struct {
	Srv                            *httptest.Server
	Tenant, ClientID, ClientSecret string
	Clients                        map[int]string // id → name

	mu      sync.Mutex
	tokens  map[string]bool
	grants  int
	tickets []*HaloTicket
}

// NewHaloPSA starts a fake with clients 12 ("Acme Corporation") and 99
// ("Unassigned").
func NewHaloPSA() *HaloPSA {
	f := &HaloPSA{Tenant: "mymsp", ClientID: "7c2d9a1e-backupmon", ClientSecret: "s3cret-halo", Clients: map[int]string{12: "Acme Corporation", 99: "Unassigned"}, tokens: map[string]bool{}}
	f.Srv = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

// AuthURL and APIURL are the authorisation and resource servers.
func (f *HaloPSA) AuthURL() string { return f.Srv.URL + "/auth" }

// APIURL is the resource server.
func (f *HaloPSA) APIURL() string { return f.Srv.URL + "/api" }

// Grants returns how many tokens were granted.
func (f *HaloPSA) Grants() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.grants
}

// RevokeTokens makes every token granted so far invalid, as their expiry
// would.
func (f *HaloPSA) RevokeTokens() {
	f.mu.Lock()
	clear(f.tokens)
	f.mu.Unlock()
}

// Tickets returns copies of the tickets made.
func (f *HaloPSA) Tickets() []HaloTicket {
	return copies(&f.mu, f.tickets, func(t HaloTicket) HaloTicket { t.Actions = slices.Clone(t.Actions); return t })
}

var haloClientPath = regexp.MustCompile(`^/api/Client/(\d+)$`)

func (f *HaloPSA) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path == "/auth/token" && r.Method == http.MethodPost {
		f.token(w, r, body)
		return
	}
	if !strings.HasPrefix(r.URL.Path, "/api/") {
		http.NotFound(w, r)
		return
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !f.tokens[tok] {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	switch m := haloClientPath.FindStringSubmatch(r.URL.Path); {
	case r.URL.Path == "/api/Tickets" && r.Method == http.MethodGet:
		search := r.URL.Query().Get("search")
		list := []map[string]any{}
		for _, t := range f.tickets {
			if search != "" && strings.Contains(t.Summary, search) {
				list = append(list, map[string]any{"id": t.ID, "summary": t.Summary, "client_id": t.ClientID})
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"record_count": len(list), "tickets": list})
	case r.URL.Path == "/api/Tickets" && r.Method == http.MethodPost:
		f.postTickets(w, body)
	case r.URL.Path == "/api/Actions" && r.Method == http.MethodPost:
		f.postActions(w, body)
	case m != nil && r.Method == http.MethodGet:
		id, _ := strconv.Atoi(m[1])
		name, ok := f.Clients[id]
		if !ok {
			writeJSON(w, http.StatusNotFound, "Client not found")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "name": name})
	default:
		http.NotFound(w, r)
	}
}

// token grants a token for the client-credentials grant, or answers
// OAuth's error body.
func (f *HaloPSA) token(w http.ResponseWriter, r *http.Request, body []byte) {
	form, err := url.ParseQuery(string(body))
	switch {
	case !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") || err != nil:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": "the body must be a form"})
	case r.URL.Query().Get("tenant") != f.Tenant:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": "unknown tenant"})
	case form.Get("grant_type") != "client_credentials":
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
	case form.Get("client_id") != f.ClientID || form.Get("client_secret") != f.ClientSecret:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client", "error_description": "The client credentials are invalid"})
	case form.Get("scope") != "all":
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_scope"})
	default:
		var raw [16]byte
		_, _ = rand.Read(raw[:])
		tok := hex.EncodeToString(raw[:])
		f.tokens[tok] = true
		f.grants++
		writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600, "scope": "all"})
	}
}

func (f *HaloPSA) ticket(id int) *HaloTicket {
	return find(f.tickets, func(t *HaloTicket) bool { return t.ID == id })
}

// haloIn is an element of the arrays POSTed to /api/Tickets (a ticket,
// its id set for an update) and /api/Actions (an action).
type haloIn struct {
	ID         int    `json:"id"`
	Summary    string `json:"summary"`
	Details    string `json:"details"`
	ClientID   int    `json:"client_id"`
	TypeID     int    `json:"tickettype_id"`
	PriorityID int    `json:"priority_id"`
	StatusID   int    `json:"status_id"`
	TicketID   int    `json:"ticket_id"`
	Note       string `json:"note"`
	Outcome    string `json:"outcome"`
	Hidden     bool   `json:"hiddenfromuser"`
}

func (f *HaloPSA) postTickets(w http.ResponseWriter, body []byte) {
	var in haloIn
	if !decodeOne(w, body, "tickets", &in) {
		return
	}
	if in.ID != 0 {
		t := f.ticket(in.ID)
		if t == nil {
			writeJSON(w, http.StatusBadRequest, "Ticket "+strconv.Itoa(in.ID)+" not found")
			return
		}
		if in.StatusID != 0 {
			t.StatusID = in.StatusID
		}
		if in.PriorityID != 0 {
			t.PriorityID = in.PriorityID
		}
		writeJSON(w, http.StatusCreated, map[string]any{"id": t.ID, "summary": t.Summary, "status_id": t.StatusID})
		return
	}
	if in.Summary == "" {
		writeJSON(w, http.StatusBadRequest, "Please enter a Summary")
		return
	}
	if _, ok := f.Clients[in.ClientID]; !ok {
		writeJSON(w, http.StatusBadRequest, "Client "+strconv.Itoa(in.ClientID)+" not found")
		return
	}
	t := &HaloTicket{ID: 500 + len(f.tickets) + 1, Summary: in.Summary, Details: in.Details, ClientID: in.ClientID, TypeID: in.TypeID, PriorityID: in.PriorityID, StatusID: 1}
	f.tickets = append(f.tickets, t)
	writeJSON(w, http.StatusCreated, map[string]any{"id": t.ID, "summary": t.Summary, "client_id": t.ClientID, "status_id": t.StatusID})
}

func (f *HaloPSA) postActions(w http.ResponseWriter, body []byte) {
	var in haloIn
	if !decodeOne(w, body, "actions", &in) {
		return
	}
	t := f.ticket(in.TicketID)
	if t == nil {
		writeJSON(w, http.StatusBadRequest, "Ticket "+strconv.Itoa(in.TicketID)+" not found")
		return
	}
	t.Actions = append(t.Actions, HaloAction{Note: in.Note, Outcome: in.Outcome, Hidden: in.Hidden})
	writeJSON(w, http.StatusCreated, map[string]any{"id": len(t.Actions), "ticket_id": t.ID})
}
