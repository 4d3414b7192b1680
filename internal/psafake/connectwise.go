package psafake

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// CWTicket is a ticket the ConnectWise fake keeps.
type CWTicket struct {
	ID                                     int
	Summary, InitialDescription, XRef      string
	Company, Board, Type, Priority, Status string
	Notes                                  []CWNote
}

// CWNote is a note of a ConnectWise ticket.
type CWNote struct {
	Text                         string
	Internal, Detail, Resolution bool
}

// ConnectWise is a fake ConnectWise PSA REST API 3.0 under
// /v4_6_release/apis/3.0: Basic "<company>+<public>:<private>"
// authentication and a clientId header on every request (401, 400
// otherwise), tickets created, found by conditions=externalXRef="...",
// noted and patched (JSON Patch replace of status or priority by name).
type ConnectWise struct {
	Srv                                      *httptest.Server
	Company, PublicKey, PrivateKey, ClientID string
	Companies                                map[string]string // identifier → name
	Boards, Statuses, Priorities             []string

	// BeforeAnswer, when set, runs after a ticket is made and before the
	// answer is written (a test kills the client there).
	BeforeAnswer func(t CWTicket)

	mu       sync.Mutex
	tickets  []*CWTicket
	creates  int
	searches int
}

// Searches returns how many ticket searches (GET /service/tickets) came.
func (f *ConnectWise) Searches() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.searches
}

// SetBeforeAnswer sets BeforeAnswer while requests may be served.
func (f *ConnectWise) SetBeforeAnswer(fn func(CWTicket)) {
	f.mu.Lock()
	f.BeforeAnswer = fn
	f.mu.Unlock()
}

// NewConnectWise starts a fake with one company ("AcmeCo", "Acme
// Corporation"), a default one ("Catchall"), board "Service Desk",
// statuses "New" and "Closed (resolved)", priorities "Priority 3 - Normal
// Response" and "Priority 1 - Emergency Response".
func NewConnectWise() *ConnectWise {
	f := &ConnectWise{
		Company: "mymsp", PublicKey: "pubKEY123", PrivateKey: "privKEY456", ClientID: "2f1e8c3a-5b7d-4e2a-9c1f-0a1b2c3d4e5f",
		Companies:  map[string]string{"AcmeCo": "Acme Corporation", "Catchall": "Unassigned clients"},
		Boards:     []string{"Service Desk"},
		Statuses:   []string{"New", "Closed (resolved)"},
		Priorities: []string{"Priority 3 - Normal Response", "Priority 1 - Emergency Response"},
	}
	f.Srv = httptest.NewServer(http.HandlerFunc(f.serve))
	return f
}

// URL is the API's base, as a channel's settings.url gives it.
func (f *ConnectWise) URL() string { return f.Srv.URL + "/v4_6_release/apis/3.0" }

// Tickets returns copies of the tickets made.
func (f *ConnectWise) Tickets() []CWTicket {
	return copies(&f.mu, f.tickets, func(t CWTicket) CWTicket { t.Notes = slices.Clone(t.Notes); return t })
}

// cwError writes ConnectWise's error body.
func cwError(w http.ResponseWriter, status int, code, msg string, errs ...map[string]string) {
	body := map[string]any{"code": code, "message": msg}
	if len(errs) > 0 {
		body["errors"] = errs
	}
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

var cwTicketPath = regexp.MustCompile(`^/service/tickets/(\d+)(/notes)?$`)

func (f *ConnectWise) serve(w http.ResponseWriter, r *http.Request) {
	path, ok := strings.CutPrefix(r.URL.Path, "/v4_6_release/apis/3.0")
	if !ok {
		cwError(w, http.StatusNotFound, "NotFound", "No HTTP resource was found that matches the request URI")
		return
	}
	if r.Header.Get("clientId") != f.ClientID {
		cwError(w, http.StatusBadRequest, "InvalidClientId", "A valid clientId is required")
		return
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(f.Company+"+"+f.PublicKey+":"+f.PrivateKey))
	if r.Header.Get("Authorization") != want {
		cwError(w, http.StatusUnauthorized, "Unauthorized", "Incorrect public/private key")
		return
	}
	body, _ := io.ReadAll(r.Body)
	if len(body) > 0 && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		cwError(w, http.StatusUnsupportedMediaType, "UnsupportedMediaType", "Content-Type must be application/json")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch m := cwTicketPath.FindStringSubmatch(path); {
	case path == "/system/info" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"version": "v2024.1.99999", "isCloud": true, "serverTimeZone": "Eastern Standard Time"})
	case path == "/company/companies" && r.Method == http.MethodGet:
		id := conditionValue(r.URL.Query().Get("conditions"), "identifier")
		list := []map[string]any{}
		if name, ok := f.Companies[id]; ok {
			list = append(list, map[string]any{"id": 250, "identifier": id, "name": name})
		}
		writeJSON(w, http.StatusOK, list)
	case path == "/service/tickets" && r.Method == http.MethodGet:
		f.searches++
		xref := conditionValue(r.URL.Query().Get("conditions"), "externalXRef")
		list := []map[string]any{}
		for _, t := range f.tickets {
			if xref != "" && t.XRef == xref {
				list = append(list, map[string]any{"id": t.ID})
			}
		}
		writeJSON(w, http.StatusOK, list)
	case path == "/service/tickets" && r.Method == http.MethodPost:
		f.createTicket(w, body)
	case m != nil && m[2] == "/notes" && r.Method == http.MethodPost:
		f.addNote(w, f.ticket(m[1]), body)
	case m != nil && m[2] == "" && r.Method == http.MethodPatch:
		f.patch(w, f.ticket(m[1]), body)
	default:
		cwError(w, http.StatusNotFound, "NotFound", "No HTTP resource was found that matches the request URI")
	}
}

// conditionValue reads `field="value"` out of a conditions parameter.
func conditionValue(cond, field string) string {
	m := regexp.MustCompile(`^` + field + `\s*=\s*"([^"]*)"$`).FindStringSubmatch(strings.TrimSpace(cond))
	if m == nil {
		return ""
	}
	return m[1]
}

func (f *ConnectWise) ticket(id string) *CWTicket {
	n, _ := strconv.Atoi(id)
	return find(f.tickets, func(t *CWTicket) bool { return t.ID == n })
}

func invalidTicket(w http.ResponseWriter, code, msg, field string) {
	cwError(w, http.StatusBadRequest, "InvalidObject", "ticket object is invalid",
		map[string]string{"code": code, "message": msg, "resource": "ticket", "field": field})
}

func (f *ConnectWise) createTicket(w http.ResponseWriter, body []byte) {
	var in struct {
		Summary            string            `json:"summary"`
		InitialDescription string            `json:"initialDescription"`
		ExternalXRef       string            `json:"externalXRef"`
		Company            map[string]any    `json:"company"`
		Board              map[string]any    `json:"board"`
		Type               map[string]string `json:"type"`
		Priority           map[string]string `json:"priority"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		cwError(w, http.StatusBadRequest, "InvalidObject", "ticket object is invalid: "+err.Error())
		return
	}
	switch {
	case in.Summary == "":
		invalidTicket(w, "NullRequiredField", "summary is required.", "summary")
		return
	case len([]rune(in.Summary)) > 100:
		invalidTicket(w, "MaxLengthField", "The field summary must be a string with a maximum length of 100.", "summary")
		return
	case len(in.ExternalXRef) > 100:
		invalidTicket(w, "MaxLengthField", "The field externalXRef must be a string with a maximum length of 100.", "externalXRef")
		return
	}
	ident, _ := in.Company["identifier"].(string)
	if _, ok := f.Companies[ident]; !ok {
		invalidTicket(w, "NotFound", fmt.Sprintf("Company %q not found", ident), "company")
		return
	}
	board, _ := in.Board["name"].(string)
	if !contains(f.Boards, board) {
		invalidTicket(w, "NotFound", fmt.Sprintf("Board %q not found", board), "board")
		return
	}
	if p := in.Priority["name"]; p != "" && !contains(f.Priorities, p) {
		invalidTicket(w, "NotFound", fmt.Sprintf("Priority %q not found", p), "priority")
		return
	}
	f.creates++
	t := &CWTicket{
		ID: 1000 + f.creates, Summary: in.Summary, InitialDescription: in.InitialDescription, XRef: in.ExternalXRef,
		Company: ident, Board: board, Type: in.Type["name"], Priority: in.Priority["name"], Status: "New",
	}
	f.tickets = append(f.tickets, t)
	if before := f.BeforeAnswer; before != nil {
		f.mu.Unlock()
		before(*t)
		f.mu.Lock()
	}
	writeJSON(w, http.StatusCreated, map[string]any{
		"id": t.ID, "summary": t.Summary, "board": map[string]any{"id": 1, "name": board},
		"company": map[string]any{"id": 250, "identifier": ident}, "status": map[string]any{"id": 16, "name": "New"},
	})
}

func (f *ConnectWise) addNote(w http.ResponseWriter, t *CWTicket, body []byte) {
	if t == nil {
		cwError(w, http.StatusNotFound, "NotFound", "Ticket not found")
		return
	}
	var in struct {
		Text                  string `json:"text"`
		InternalAnalysisFlag  bool   `json:"internalAnalysisFlag"`
		DetailDescriptionFlag bool   `json:"detailDescriptionFlag"`
		ResolutionFlag        bool   `json:"resolutionFlag"`
	}
	if json.Unmarshal(body, &in) != nil || in.Text == "" {
		cwError(w, http.StatusBadRequest, "InvalidObject", "note object is invalid",
			map[string]string{"code": "NullRequiredField", "message": "text is required.", "resource": "note", "field": "text"})
		return
	}
	if !in.InternalAnalysisFlag && !in.DetailDescriptionFlag && !in.ResolutionFlag {
		cwError(w, http.StatusBadRequest, "InvalidObject", "note object is invalid",
			map[string]string{"code": "InvalidField", "message": "A note must be flagged as discussion, internal or resolution.", "resource": "note", "field": "flags"})
		return
	}
	t.Notes = append(t.Notes, CWNote{Text: in.Text, Internal: in.InternalAnalysisFlag, Detail: in.DetailDescriptionFlag, Resolution: in.ResolutionFlag})
	writeJSON(w, http.StatusCreated, map[string]any{"id": len(t.Notes), "ticketId": t.ID, "text": in.Text})
}

func (f *ConnectWise) patch(w http.ResponseWriter, t *CWTicket, body []byte) {
	if t == nil {
		cwError(w, http.StatusNotFound, "NotFound", "Ticket not found")
		return
	}
	var ops []struct {
		Op    string            `json:"op"`
		Path  string            `json:"path"`
		Value map[string]string `json:"value"`
	}
	if json.Unmarshal(body, &ops) != nil || len(ops) == 0 {
		cwError(w, http.StatusBadRequest, "InvalidObject", "The patch document must be an array of operations")
		return
	}
	for _, op := range ops {
		name := op.Value["name"]
		switch {
		case op.Op != "replace":
			cwError(w, http.StatusBadRequest, "InvalidObject", "Unsupported patch operation "+op.Op)
			return
		case op.Path == "status" && contains(f.Statuses, name):
			t.Status = name
		case op.Path == "priority" && contains(f.Priorities, name):
			t.Priority = name
		default:
			invalidTicket(w, "NotFound", fmt.Sprintf("%s %q not found", op.Path, name), op.Path)
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": t.ID, "status": map[string]any{"name": t.Status}, "priority": map[string]any{"name": t.Priority}})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// copies returns copies of the values list points to, each made by clone,
// read under mu.
func copies[T any](mu *sync.Mutex, list []*T, clone func(T) T) []T {
	mu.Lock()
	defer mu.Unlock()
	out := make([]T, 0, len(list))
	for _, t := range list {
		out = append(out, clone(*t))
	}
	return out
}

// decodeOne reads a body that must be a JSON array of exactly one object
// of what (HaloPSA's shape) into *v, or answers 400 and returns false.
func decodeOne[T any](w http.ResponseWriter, body []byte, what string, v *T) bool {
	var list []T
	if err := json.Unmarshal(body, &list); err != nil || len(list) != 1 {
		writeJSON(w, http.StatusBadRequest, "The body must be an array of "+what)
		return false
	}
	*v = list[0]
	return true
}

// find returns the first of list that match holds of, or nil.
func find[T any](list []*T, match func(*T) bool) *T {
	if i := slices.IndexFunc(list, match); i >= 0 {
		return list[i]
	}
	return nil
}
