package docs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// docURL names the document as a schema resource. It is never fetched: the
// document is added to the compiler as a resource under this address.
const docURL = "https://backupmon.invalid/openapi.json"

const (
	tsPattern   = `^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`
	uuidPattern = `^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`
)

var (
	tsRE   = regexp.MustCompile(tsPattern)
	uuidRE = regexp.MustCompile(uuidPattern)
)

// loadDoc parses the document with plain encoding/json.
func loadDoc(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(OpenAPI))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	if dec.More() {
		t.Fatal("openapi.json has data after the document")
	}
	return doc
}

// newCompiler returns a JSON Schema 2020-12 compiler that holds the
// document as a resource; schemas are compiled by pointer into it, e.g.
// docURL + "#/components/schemas/Job". This is the way the black-box tests
// compile response schemas.
func newCompiler(t *testing.T) *jsonschema.Compiler {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(OpenAPI))
	if err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat() // date-time, uuid and date are asserted, not only annotated
	if err := c.AddResource(docURL, doc); err != nil {
		t.Fatalf("add resource: %v", err)
	}
	return c
}

// compile compiles the schema at a JSON pointer fragment of the document.
func compile(t *testing.T, c *jsonschema.Compiler, pointer string) *jsonschema.Schema {
	t.Helper()
	sch, err := c.Compile(docURL + "#" + pointer)
	if err != nil {
		t.Fatalf("compile %s: %v", pointer, err)
	}
	return sch
}

// passFail fails t for each instance of pass that sch refuses and each of
// fail that it takes, name saying what sch is.
func passFail(t *testing.T, sch *jsonschema.Schema, name string, pass, fail []string) {
	t.Helper()
	for _, s := range pass {
		if err := sch.Validate(parse(t, s)); err != nil {
			t.Errorf("%s: %s must pass: %v", name, s, err)
		}
	}
	for _, s := range fail {
		if sch.Validate(parse(t, s)) == nil {
			t.Errorf("%s: %s must fail", name, s)
		}
	}
}

// pointerToken escapes a JSON pointer token.
func pointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// resolvePointer looks up a local JSON pointer ("#/a/b") in doc.
func resolvePointer(doc any, ref string) (any, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, fmt.Errorf("not a local reference")
	}
	p := strings.TrimPrefix(ref, "#")
	if p == "" {
		return doc, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("not a JSON pointer")
	}
	cur := doc
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, fmt.Errorf("no member %q", tok)
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil, fmt.Errorf("bad index %q", tok)
			}
			cur = v[i]
		default:
			return nil, fmt.Errorf("cannot descend into %T at %q", cur, tok)
		}
	}
	return cur, nil
}

// walk calls fn for every node of v with its JSON pointer.
func walk(v any, ptr string, fn func(ptr string, v any)) {
	fn(ptr, v)
	switch x := v.(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		for _, k := range keys {
			walk(x[k], ptr+"/"+pointerToken(k), fn)
		}
	case []any:
		for i, e := range x {
			walk(e, ptr+"/"+strconv.Itoa(i), fn)
		}
	}
}

func TestDocumentIsOpenAPI31(t *testing.T) {
	doc := loadDoc(t)
	if doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi = %v, want 3.1.0", doc["openapi"])
	}
	if doc["jsonSchemaDialect"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("jsonSchemaDialect = %v", doc["jsonSchemaDialect"])
	}
	info, _ := doc["info"].(map[string]any)
	if info == nil || info["title"] == "" || info["version"] == "" {
		t.Errorf("info needs title and version: %v", info)
	}
	servers, _ := doc["servers"].([]any)
	if len(servers) != 1 || servers[0].(map[string]any)["url"] != "/api/v1" {
		t.Errorf("servers = %v, want [{url: /api/v1}]", servers)
	}
	bearer, err := resolvePointer(doc, "#/components/securitySchemes/bearerAuth")
	if err != nil {
		t.Fatalf("bearerAuth: %v", err)
	}
	if b := bearer.(map[string]any); b["type"] != "http" || b["scheme"] != "bearer" {
		t.Errorf("bearerAuth = %v", b)
	}

	refs := 0
	walk(doc, "", func(ptr string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		r, ok := m["$ref"]
		if !ok {
			return
		}
		refs++
		s, ok := r.(string)
		if !ok {
			t.Errorf("%s: $ref is %T", ptr, r)
			return
		}
		if _, err := resolvePointer(doc, s); err != nil {
			t.Errorf("%s: $ref %q does not resolve: %v", ptr, s, err)
		}
	})
	if refs < 50 {
		t.Errorf("only %d $refs: components are not reused", refs)
	}
}

// TestSchemasAreStrict checks the document's own rules: every object schema
// lists all its properties as required and refuses others, every timestamp
// carries the contract's pattern, every id the UUID pattern.
func TestSchemasAreStrict(t *testing.T) {
	doc := loadDoc(t)
	// Object schemas that are open by design, and the one optional field.
	open := map[string]bool{
		"/components/schemas/ReportRequest":                                        true, // other body fields are ignored
		"/paths/~1openapi.json/get/responses/200/content/application~1json/schema": true,
	}
	optional := map[string]bool{"/components/schemas/Error/properties/error/parameter": true}

	objects := 0
	walk(doc, "", func(ptr string, v any) {
		m, ok := v.(map[string]any)
		if !ok || !hasType(m["type"], "object") {
			return
		}
		objects++
		if open[ptr] {
			if m["additionalProperties"] != true {
				t.Errorf("%s: open object must say additionalProperties: true", ptr)
			}
			return
		}
		if m["additionalProperties"] != false {
			t.Errorf("%s: additionalProperties must be false", ptr)
		}
		props, _ := m["properties"].(map[string]any)
		if len(props) == 0 {
			t.Errorf("%s: object without properties", ptr)
		}
		var req []string
		if r, ok := m["required"].([]any); ok {
			for _, x := range r {
				req = append(req, x.(string))
			}
		}
		for name := range props {
			if !slices.Contains(req, name) && !optional[ptr+"/"+name] {
				t.Errorf("%s: property %q is not required", ptr, name)
			}
		}
		for _, name := range req {
			if _, ok := props[name]; !ok {
				t.Errorf("%s: required %q is not a property", ptr, name)
			}
		}
	})
	if objects < 30 {
		t.Errorf("only %d object schemas", objects)
	}

	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	timestamps, ids := 0, 0
	walk(schemas, "/components/schemas", func(ptr string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		props, ok := m["properties"].(map[string]any)
		if !ok || !hasType(m["type"], "object") {
			return
		}
		for name, p := range props {
			ps, ok := p.(map[string]any)
			if !ok {
				continue
			}
			switch {
			case strings.HasSuffix(name, "At") || strings.HasSuffix(name, "Until") || name == "timestamp" ||
				(strings.HasSuffix(ptr, "/Period") && (name == "from" || name == "to")):
				if ptr == "/components/schemas/ReportRequest" {
					continue
				}
				timestamps++
				if ps["format"] != "date-time" || ps["pattern"] != tsPattern {
					t.Errorf("%s/%s: a timestamp needs format date-time and pattern %s", ptr, name, tsPattern)
				}
			case name == "id" || (strings.HasSuffix(name, "Id") && name != "requestId") || name == "alert_id":
				ids++
				if ps["pattern"] != uuidPattern {
					t.Errorf("%s/%s: an id needs the UUID pattern", ptr, name)
				}
			}
		}
	})
	if timestamps < 25 || ids < 15 {
		t.Errorf("found %d timestamps and %d ids; the walk missed schemas", timestamps, ids)
	}
}

func hasType(t any, want string) bool {
	switch x := t.(type) {
	case string:
		return x == want
	case []any:
		for _, e := range x {
			if e == want {
				return true
			}
		}
	}
	return false
}

// TestSchemasCompile compiles every component schema and every schema of
// every response and request body.
func TestSchemasCompile(t *testing.T) {
	doc := loadDoc(t)
	c := newCompiler(t)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, want := range []string{"Workspace", "Key", "Limits", "Client", "Job", "JobDetail", "Device",
		"Schedule", "JobSLA", "Result", "Alert", "AI", "HealthWorkspace", "HealthClient", "Pagination",
		"Error", "ReportRequest", "ReportResponse", "ReportError"} {
		if _, ok := schemas[want]; !ok {
			t.Errorf("components/schemas/%s is missing", want)
		}
	}
	for name := range schemas {
		compile(t, c, "/components/schemas/"+pointerToken(name))
	}
	n := 0
	walk(doc, "", func(ptr string, v any) {
		if strings.HasSuffix(ptr, "/content/application~1json/schema") ||
			(strings.HasSuffix(ptr, "/schema") && strings.Contains(ptr, "/parameters/")) {
			compile(t, c, ptr)
			n++
		}
	})
	if n < 30 {
		t.Errorf("compiled only %d body and parameter schemas", n)
	}
}

// ---------------------------------------------------------------- instances

const (
	wsID     = "0195c2a4-6f1e-7a3b-9c4d-2e8f1a6b3c5d"
	keyID    = "0195c2a4-7000-7a3b-9c4d-2e8f1a6b3c01"
	clientID = "0195c2a4-7100-7a3b-8c4d-2e8f1a6b3c02"
	client2  = "0195c2a4-7101-7a3b-8c4d-2e8f1a6b3c03"
	jobID    = "0195c2a4-7200-7a3b-ac4d-2e8f1a6b3c04"
	job2ID   = "0195c2a4-7201-7a3b-ac4d-2e8f1a6b3c05"
	deviceID = "0195c2a4-7300-7a3b-bc4d-2e8f1a6b3c06"
	resultID = "0195c2a4-7400-7a3b-9c4d-2e8f1a6b3c07"
	result2  = "0195c2a4-7401-7a3b-9c4d-2e8f1a6b3c08"
	alertID  = "0195c2a4-7500-7a3b-9c4d-2e8f1a6b3c09"
	alert2ID = "0195c2a4-7501-7a3b-9c4d-2e8f1a6b3c0a"
)

var fill = strings.NewReplacer(
	"$WS", wsID, "$KEY", keyID, "$CLIENT2", client2, "$CLIENT", clientID, "$JOB2", job2ID, "$JOB", jobID,
	"$DEVICE", deviceID, "$RESULT2", result2, "$RESULT", resultID, "$ALERT2", alert2ID, "$ALERT", alertID,
)

var (
	workspaceRecord = `{"id":"$WS","name":"Demo MSP","timeZone":"Europe/London","plan":"pro","status":"active",
		"trialEndsAt":null,"createdAt":"2025-03-01T10:00:00.000Z"}`
	trialWorkspace = `{"id":"$WS","name":"Trial MSP","timeZone":"UTC","plan":"trial","status":"active",
		"trialEndsAt":"2025-03-31T00:00:00.000Z","createdAt":"2025-03-01T10:00:00.000Z"}`
	keyRecord = `{"id":"$KEY","name":"PSA sync","prefix":"svc_live_3f9a1c2","type":"rest",
		"scopes":["workspace:read","clients:read","jobs:read","reports:read","alerts:read","health:read"],
		"createdAt":"2025-03-01T10:05:00.000Z","expiresAt":null,"lastUsedAt":"2025-03-14T09:26:53.589Z"}`
	keyNarrow = `{"id":"$KEY","name":"Health board","prefix":"svc_live_0a1b2c3","type":"rest",
		"scopes":["workspace:read","health:read"],"createdAt":"2025-03-01T10:05:00.000Z",
		"expiresAt":"2026-03-01T00:00:00.000Z","lastUsedAt":null}`
	limitsPro = `{"requestsPerMinute":300,"monthlyQuota":null,"monthlyUsed":null,"pageSizeDefault":50,
		"pageSizeMax":100,"maxWindowDays":93,"healthDaysMax":90,"reportRequestsPerMinute":60,"reportsPerJobPerDay":100}`
	limitsGrowth = `{"requestsPerMinute":60,"monthlyQuota":10000,"monthlyUsed":1234,"pageSizeDefault":50,
		"pageSizeMax":100,"maxWindowDays":93,"healthDaysMax":90,"reportRequestsPerMinute":60,"reportsPerJobPerDay":100}`

	clientRecord = `{"id":"$CLIENT","name":"Acme Dental","status":"active","needsAttention":true,"openAlerts":1,
		"jobs":{"total":4,"healthy":2,"warning":0,"failed":1,"missing":0,"waiting":1,"paused":0},
		"sla":{"successRate":92.3,"reports":13,"periodDays":30,"jobsMeetingTarget":2,"jobsBelowTarget":1},
		"createdAt":"2025-03-01T10:10:00.000Z"}`
	quietClient = `{"id":"$CLIENT2","name":"Bakery","status":"paused","needsAttention":false,"openAlerts":0,
		"jobs":{"total":1,"healthy":0,"warning":0,"failed":0,"missing":0,"waiting":0,"paused":1},
		"sla":{"successRate":null,"reports":0,"periodDays":30,"jobsMeetingTarget":0,"jobsBelowTarget":0},
		"createdAt":"2025-03-02T10:10:00.000Z"}`

	healthWorkspace = `{"scope":"workspace","monitoredJobs":12,"healthy":8,"warning":1,"failed":1,"missing":1,
		"waiting":1,"paused":0,"openAlerts":1,"unresolvedAlerts":2,"backupSuccessRate":94.4,"reports":161,
		"slaComplianceRate":81.8,"clientsNeedingAttention":2,"clients":3,
		"period":{"from":"2025-02-12T09:26:53.589Z","to":"2025-03-14T09:26:53.589Z","days":30},
		"timestamp":"2025-03-14T09:26:53.589Z"}`
	healthEmpty = `{"scope":"workspace","monitoredJobs":0,"healthy":0,"warning":0,"failed":0,"missing":0,
		"waiting":0,"paused":0,"openAlerts":0,"unresolvedAlerts":0,"backupSuccessRate":null,"reports":0,
		"slaComplianceRate":null,"clientsNeedingAttention":0,"clients":0,
		"period":{"from":"2025-03-13T09:26:53.589Z","to":"2025-03-14T09:26:53.589Z","days":1},
		"timestamp":"2025-03-14T09:26:53.589Z"}`
	healthClient = `{"scope":"client","clientId":"$CLIENT","clientName":"Acme Dental","monitoredJobs":4,
		"healthy":2,"warning":0,"failed":1,"missing":0,"waiting":1,"paused":0,"openAlerts":1,"unresolvedAlerts":1,
		"backupSuccessRate":92.3,"reports":13,"slaComplianceRate":66.7,"clientsNeedingAttention":1,"clients":1,
		"period":{"from":"2025-02-12T09:26:53.589Z","to":"2025-03-14T09:26:53.589Z","days":30},
		"timestamp":"2025-03-14T09:26:53.589Z"}`

	jobFields = `"id":"$JOB","name":"Nightly file server","clientId":"$CLIENT","clientName":"Acme Dental",
		"device":{"id":"$DEVICE","name":"FS01","type":"server","hostname":"fs01.acme.local"},
		"vendor":"veeam","vendorName":"Veeam Backup & Replication","status":"failed","late":null,
		"lastResult":"failed","lastReportAt":"2025-03-14T02:00:00.000Z","lastSuccessAt":"2025-03-12T02:00:00.000Z",
		"lastFailureAt":"2025-03-14T02:00:00.000Z","failureStreak":2,"paused":false,"pausedUntil":null,
		"schedule":{"intervalMinutes":1440,"expectedDays":["mon","tue","wed","thu","fri"],"graceMinutes":60,
		"nextExpectedAt":"2025-03-17T02:00:03.120Z"},
		"sla":{"target":95.0,"successRate":85.7,"met":false,"reports":14,"periodDays":30},
		"createdAt":"2025-03-01T10:20:00.000Z"`
	jobRecord   = `{` + jobFields + `}`
	waitingLate = `{"id":"$JOB2","name":"Laptop image","clientId":"$CLIENT","clientName":"Acme Dental",
		"device":{"id":"$DEVICE","name":"LT-7","type":"workstation","hostname":"lt-7"},
		"vendor":"generic","vendorName":"Generic","status":"waiting","late":{"dueAt":"2025-03-14T09:00:00.000Z","minutes":26},
		"lastResult":"none","lastReportAt":null,"lastSuccessAt":null,"lastFailureAt":null,"failureStreak":0,
		"paused":false,"pausedUntil":null,
		"schedule":{"intervalMinutes":5,"expectedDays":["mon","tue","wed","thu","fri","sat","sun"],"graceMinutes":0,
		"nextExpectedAt":"2025-03-14T09:00:00.000Z"},
		"sla":{"target":99.95,"successRate":null,"met":false,"reports":0,"periodDays":30},
		"createdAt":"2025-03-14T08:55:00.000Z"}`
	pausedJob = `{"id":"$JOB2","name":"NAS sync","clientId":"$CLIENT2","clientName":"Bakery",
		"device":{"id":"$DEVICE","name":"NAS","type":"nas","hostname":"nas.bakery.local"},
		"vendor":"synology","vendorName":"Synology Active Backup for Business","status":"paused","late":null,
		"lastResult":"ok","lastReportAt":"2025-03-10T01:00:00.000Z","lastSuccessAt":"2025-03-10T01:00:00.000Z",
		"lastFailureAt":null,"failureStreak":0,"paused":true,"pausedUntil":"2025-03-20T00:00:00.000Z",
		"schedule":{"intervalMinutes":44640,"expectedDays":["sun"],"graceMinutes":10080,
		"nextExpectedAt":"2025-04-10T01:00:00.000Z"},
		"sla":{"target":100.0,"successRate":100.0,"met":true,"reports":3,"periodDays":30},
		"createdAt":"2025-03-02T10:20:00.000Z"}`

	resultRecord = `{"id":"$RESULT","jobId":"$JOB","jobName":"Nightly file server","clientId":"$CLIENT",
		"vendor":"veeam","status":"ok","completedAt":"2025-03-14T02:00:00.000Z","startedAt":"2025-03-14T01:00:00.000Z",
		"receivedAt":"2025-03-14T02:00:03.120Z","durationSeconds":3600,"sizeBytes":1073741824}`
	bareResult = `{"id":"$RESULT2","jobId":"$JOB","jobName":"Nightly file server","clientId":"$CLIENT",
		"vendor":"veeam","status":"failed","completedAt":"2025-03-13T02:00:00.000Z","startedAt":null,
		"receivedAt":"2025-03-13T02:00:00.000Z","durationSeconds":null,"sizeBytes":null}`

	openAlert = `{"id":"$ALERT","type":"failed","severity":"critical","status":"open","clientId":"$CLIENT",
		"jobId":"$JOB","jobName":"Nightly file server","summary":"Backup failed (reported through the Report API)",
		"createdAt":"2025-03-13T02:00:00.000Z","acknowledgedAt":null,"snoozedUntil":null,"resolvedAt":null,
		"recoverySeconds":null,"ai":{"likelyCause":"Possibly the backup target ran out of space (a suggestion, not a diagnosis).",
		"confidence":"medium","category":"storage"}}`
	resolvedAlert = `{"id":"$ALERT2","type":"warning","severity":"warning","status":"resolved","clientId":"$CLIENT",
		"jobId":"$JOB","jobName":"Nightly file server","summary":"Backup completed with warnings (reported through the Report API)",
		"createdAt":"2025-03-10T02:00:00.000Z","acknowledgedAt":"2025-03-10T03:00:00.000Z","snoozedUntil":null,
		"resolvedAt":"2025-03-10T03:30:00.000Z","recoverySeconds":5400,"ai":null}`
	snoozedAlert = `{"id":"$ALERT2","type":"warning","severity":"critical","status":"snoozed","clientId":"$CLIENT",
		"jobId":"$JOB2","jobName":"Laptop image","summary":"VSS snapshot warning",
		"createdAt":"2025-03-10T02:00:00.000Z","acknowledgedAt":null,"snoozedUntil":"2025-03-15T00:00:00.000Z",
		"resolvedAt":null,"recoverySeconds":null,"ai":null}`

	jobDetail = `{` + jobFields + `,"recentResults":[` + resultRecord + `,` + bareResult + `],
		"unresolvedAlerts":[` + openAlert + `]}`

	badParam     = `{"error":{"code":"INVALID_PARAMETER","message":"limit must be an integer from 1 to 100","parameter":"limit","requestId":"5f2c9a1be04d00000000002a"}}`
	unauthorized = `{"error":{"code":"UNAUTHORIZED","message":"Invalid API key","requestId":"5f2c9a1be04d00000000002b"}}`
)

func list(items, pagination string) string {
	return `{"data":[` + items + `],"pagination":` + pagination + `}`
}

const (
	more = `{"nextCursor":"AQIDBAUGBwgJ-_xyz","hasMore":true}`
	last = `{"nextCursor":null,"hasMore":false}`
)

// valid lists, per component schema, instances that must pass.
var valid = map[string][]string{
	"Workspace": {workspaceRecord, trialWorkspace},
	"Key":       {keyRecord, keyNarrow},
	"Limits":    {limitsPro, limitsGrowth},
	"WorkspaceInfo": {
		`{"workspace":` + workspaceRecord + `,"key":` + keyRecord + `,"limits":` + limitsPro + `}`,
		`{"workspace":` + trialWorkspace + `,"key":` + keyNarrow + `,"limits":` + limitsGrowth + `}`,
	},
	"WorkspaceResponse": {`{"data":{"workspace":` + workspaceRecord + `,"key":` + keyRecord + `,"limits":` + limitsPro + `}}`},
	"Client":            {clientRecord, quietClient},
	"ClientJobCounts":   {`{"total":0,"healthy":0,"warning":0,"failed":0,"missing":0,"waiting":0,"paused":0}`},
	"ClientSLA":         {`{"successRate":null,"reports":0,"periodDays":30,"jobsMeetingTarget":0,"jobsBelowTarget":0}`},
	"ClientListResponse": {
		list(clientRecord+`,`+quietClient, more),
		list(``, last),
	},
	"ClientResponse":          {`{"data":` + clientRecord + `}`},
	"HealthWorkspace":         {healthWorkspace, healthEmpty},
	"HealthWorkspaceResponse": {`{"data":` + healthWorkspace + `}`},
	"HealthClient":            {healthClient},
	"HealthClientResponse":    {`{"data":` + healthClient + `}`},
	"Period":                  {`{"from":"2025-02-12T09:26:53.589Z","to":"2025-03-14T09:26:53.589Z","days":90}`},
	"Job":                     {jobRecord, waitingLate, pausedJob},
	"JobListResponse":         {list(jobRecord+`,`+waitingLate+`,`+pausedJob, last)},
	"JobDetail": {
		jobDetail,
		strings.Replace(pausedJob, `"createdAt"`, `"recentResults":[],"unresolvedAlerts":[],"createdAt"`, 1),
	},
	"JobDetailResponse":  {`{"data":` + jobDetail + `}`},
	"Device":             {`{"id":"$DEVICE","name":"DB","type":"database","hostname":"db1"}`},
	"Late":               {`{"dueAt":"2025-03-14T09:00:00.000Z","minutes":0}`},
	"Schedule":           {`{"intervalMinutes":60,"expectedDays":["sat","sun"],"graceMinutes":15,"nextExpectedAt":"2025-03-15T00:00:00.000Z"}`},
	"JobSLA":             {`{"target":0,"successRate":0.0,"met":true,"reports":4,"periodDays":30}`},
	"Result":             {resultRecord, bareResult},
	"ResultListResponse": {list(resultRecord+`,`+bareResult, more)},
	"Alert":              {openAlert, resolvedAlert, snoozedAlert},
	"AlertListResponse":  {list(openAlert+`,`+resolvedAlert+`,`+snoozedAlert, last)},
	"AI":                 {`{"likelyCause":"Credentials may have changed.","confidence":"low","category":"credentials"}`},
	"Pagination":         {more, last},
	"Error":              {badParam, unauthorized},
	"ReportRequest": {
		`{"status":"ok"}`,
		`{"status":"failed","size_bytes":12.5,"duration_seconds":3600,"timestamp":"2025-03-14T02:00:00+01:00","idempotency_key":"run-1","host":"ignored"}`,
		`{"status":"warn","size_bytes":null,"duration_seconds":null,"timestamp":null,"idempotency_key":null}`,
		`{"status":"ok","size_bytes":0,"duration_seconds":604800}`,
	},
	"ReportResponse": {
		`{"ok":true,"status":"failed","alert_id":"$ALERT","duplicate":false,"superseded":false}`,
		`{"ok":true,"status":"ok","alert_id":null,"duplicate":false,"superseded":false}`,
		`{"ok":true,"status":"warn","alert_id":null,"duplicate":true,"superseded":false}`,
		`{"ok":true,"status":"warn","alert_id":null,"duplicate":false,"superseded":true}`,
	},
	"ReportError": {`{"error":"Job not found"}`},
}

// invalid lists instances that must fail, each for one reason.
var invalid = map[string][]string{
	"Workspace": {strings.Replace(workspaceRecord, `"pro"`, `"enterprise"`, 1)},
	"Key": {
		strings.Replace(keyRecord, `"svc_live_3f9a1c2"`, `"svc_live_3f9a1c2d"`, 1),
		strings.Replace(keyRecord, `"workspace:read",`, ``, 1),
		strings.Replace(keyRecord, `"clients:read"`, `"jobs:read"`, 1),
		strings.Replace(keyRecord, `"clients:read"`, `"clients:write"`, 1),
	},
	"Limits": {
		strings.Replace(limitsPro, `"monthlyQuota":null`, `"monthlyQuota":10000`, 1),
		strings.Replace(limitsGrowth, `"monthlyUsed":1234`, `"monthlyUsed":null`, 1),
		strings.Replace(limitsGrowth, `"requestsPerMinute":60`, `"requestsPerMinute":120`, 1),
		strings.Replace(limitsGrowth, `"pageSizeMax":100`, `"pageSizeMax":200`, 1),
	},
	"WorkspaceInfo": {
		`{"workspace":` + workspaceRecord + `,"key":` + keyRecord + `,"limits":` + limitsGrowth + `}`,
		`{"workspace":` + strings.Replace(workspaceRecord, `"pro"`, `"starter"`, 1) + `,"key":` + keyRecord + `,"limits":` + limitsGrowth + `}`,
		`{"workspace":` + strings.Replace(workspaceRecord, `"active"`, `"suspended"`, 1) + `,"key":` + keyRecord + `,"limits":` + limitsPro + `}`,
		`{"workspace":` + workspaceRecord + `,"key":` + strings.Replace(keyRecord, `"rest"`, `"report"`, 1) + `,"limits":` + limitsPro + `}`,
	},
	"Client": {
		strings.Replace(clientRecord, `"successRate":92.3`, `"successRate":92.35`, 1),
		strings.Replace(clientRecord, `"successRate":92.3`, `"successRate":100.1`, 1),
		strings.Replace(clientRecord, `"periodDays":30`, `"periodDays":31`, 1),
		strings.Replace(clientRecord, `"openAlerts":1`, `"openAlerts":0.5`, 1),
		strings.Replace(quietClient, `"needsAttention":false`, `"needsAttention":true`, 1),
		strings.Replace(clientRecord, `"needsAttention":true`, `"needsAttention":false`, 1),
		strings.Replace(quietClient, `"successRate":null`, `"successRate":100.0`, 1),
	},
	"HealthWorkspace": {
		strings.Replace(healthWorkspace, `"scope":"workspace"`, `"scope":"client"`, 1),
		strings.Replace(healthWorkspace, `"days":30`, `"days":91`, 1),
		strings.Replace(healthEmpty, `"backupSuccessRate":null`, `"backupSuccessRate":100.0`, 1),
		strings.Replace(healthWorkspace, `"reports":161`, `"reports":161.5`, 1),
	},
	"HealthClient": {
		strings.Replace(healthClient, `"clients":1`, `"clients":2`, 1),
		strings.Replace(healthClient, `"clientsNeedingAttention":1`, `"clientsNeedingAttention":2`, 1),
		strings.Replace(healthClient, `"scope":"client"`, `"scope":"workspace"`, 1),
		healthWorkspace,
	},
	"Job": {
		strings.Replace(jobRecord, `"vendorName":"Veeam Backup & Replication"`, `"vendorName":"Generic"`, 1),
		strings.Replace(jobRecord, `"vendor":"veeam"`, `"vendor":"Veeam"`, 1),
		strings.Replace(jobRecord, `"status":"failed"`, `"status":"healthy"`, 1),
		strings.Replace(jobRecord, `"failureStreak":2`, `"failureStreak":0`, 1),
		strings.Replace(jobRecord, `"failureStreak":2`, `"failureStreak":1.5`, 1),
		strings.Replace(jobRecord, `"failureStreak":2`, `"failureStreak":-1`, 1),
		strings.Replace(jobRecord, `"type":"server"`, `"type":"mainframe"`, 1),
		strings.Replace(jobRecord, `"intervalMinutes":1440`, `"intervalMinutes":4`, 1),
		strings.Replace(jobRecord, `"graceMinutes":60`, `"graceMinutes":10081`, 1),
		strings.Replace(jobRecord, `["mon","tue","wed","thu","fri"]`, `["mon","mon"]`, 1),
		strings.Replace(jobRecord, `["mon","tue","wed","thu","fri"]`, `[]`, 1),
		strings.Replace(jobRecord, `["mon","tue","wed","thu","fri"]`, `["monday"]`, 1),
		strings.Replace(jobRecord, `"target":95.0`, `"target":100.5`, 1),
		strings.Replace(jobRecord, `"pausedUntil":null`, `"pausedUntil":"2025-03-20T00:00:00.000Z"`, 1),
		strings.Replace(waitingLate, `"minutes":26`, `"minutes":-1`, 1),
		strings.Replace(waitingLate, `"minutes":26`, `"minutes":2.5`, 1),
		strings.Replace(waitingLate, `"met":false`, `"met":true`, 1),
		strings.Replace(waitingLate, `"lastResult":"none"`, `"lastResult":"ok"`, 1),
		strings.Replace(pausedJob, `"paused":true`, `"paused":false`, 1),
		strings.Replace(pausedJob, `"late":null`, `"late":{"dueAt":"2025-03-14T09:00:00.000Z","minutes":1}`, 1),
	},
	"JobDetail": {
		jobRecord,
		`{` + jobFields + `,"recentResults":[` + strings.Repeat(resultRecord+`,`, 20) + bareResult + `],"unresolvedAlerts":[]}`,
		`{` + jobFields + `,"recentResults":[],"unresolvedAlerts":[` + resolvedAlert + `]}`,
		`{` + jobFields + `,"recentResults":[],"unresolvedAlerts":[` + openAlert + `,` + snoozedAlert + `]}`,
	},
	"Result": {
		strings.Replace(resultRecord, `"sizeBytes":1073741824`, `"sizeBytes":0`, 1),
		strings.Replace(resultRecord, `"sizeBytes":1073741824`, `"sizeBytes":1.5`, 1),
		strings.Replace(resultRecord, `"durationSeconds":3600`, `"durationSeconds":604801`, 1),
		strings.Replace(resultRecord, `"durationSeconds":3600`, `"durationSeconds":null`, 1),
		strings.Replace(resultRecord, `"status":"ok"`, `"status":"warn"`, 1),
		strings.Replace(resultRecord, `"status":"ok"`, `"status":"none"`, 1),
	},
	"Alert": {
		strings.Replace(openAlert, `"severity":"critical"`, `"severity":"warning"`, 1),
		strings.Replace(openAlert, `"status":"open"`, `"status":"unresolved"`, 1),
		strings.Replace(openAlert, `"status":"open"`, `"status":"resolved"`, 1),
		strings.Replace(openAlert, `"confidence":"medium"`, `"confidence":"certain"`, 1),
		strings.Replace(openAlert, `"category":"storage"`, `"category":"disk"`, 1),
		strings.Replace(resolvedAlert, `"recoverySeconds":5400`, `"recoverySeconds":null`, 1),
		strings.Replace(resolvedAlert, `"recoverySeconds":5400`, `"recoverySeconds":-1`, 1),
		strings.Replace(snoozedAlert, `"snoozedUntil":"2025-03-15T00:00:00.000Z"`, `"snoozedUntil":null`, 1),
		strings.Replace(openAlert, `"ai":{`, `"ai":{"prompt":"x",`, 1),
	},
	"Pagination": {
		`{"nextCursor":null,"hasMore":true}`,
		`{"nextCursor":"abc","hasMore":false}`,
		`{"nextCursor":"","hasMore":true}`,
		`{"nextCursor":"a b","hasMore":true}`,
	},
	"ClientListResponse": {
		list(strings.Repeat(quietClient+`,`, 100)+quietClient, more),
		`{"data":` + clientRecord + `,"pagination":` + last + `}`,
	},
	"Error": {
		`{"error":{"code":"INVALID_PARAMETER","message":"bad","requestId":"5f2c9a1be04d00000000002a"}}`,
		`{"error":{"code":"UNAUTHORIZED","message":"Invalid API key","parameter":"limit","requestId":"5f2c9a1be04d00000000002a"}}`,
		`{"error":{"code":"NOT_ALLOWED","message":"x","requestId":"5f2c9a1be04d00000000002a"}}`,
		`{"error":{"code":"NOT_FOUND","message":"","requestId":"5f2c9a1be04d00000000002a"}}`,
		`{"error":{"code":"NOT_FOUND","message":"Job not found","requestId":"req-1"}}`,
		`{"error":"Job not found"}`,
	},
	"ReportRequest": {
		`{}`,
		`[]`,
		`"ok"`,
		`{"status":"OK"}`,
		`{"status":"healthy"}`,
		`{"status":"ok","size_bytes":-1}`,
		`{"status":"ok","size_bytes":"5"}`,
		`{"status":"ok","size_bytes":9223372036854775808}`,
		`{"status":"ok","duration_seconds":604801}`,
		`{"status":"ok","duration_seconds":-0.5}`,
		`{"status":"ok","idempotency_key":5}`,
		`{"status":"ok","idempotency_key":"` + strings.Repeat("k", 256) + `"}`,
	},
	"ReportResponse": {
		`{"ok":false,"status":"ok","alert_id":null,"duplicate":false,"superseded":false}`,
		`{"ok":true,"status":"warning","alert_id":null,"duplicate":false,"superseded":false}`,
		`{"ok":true,"status":"ok","alert_id":"$ALERT","duplicate":false,"superseded":false}`,
		`{"ok":true,"status":"failed","alert_id":"$ALERT","duplicate":true,"superseded":false}`,
		`{"ok":true,"status":"failed","alert_id":null,"duplicate":true,"superseded":true}`,
		`{"ok":true,"status":"failed","alert_id":"$ALERT","duplicate":false,"superseded":true}`,
	},
	"ReportError": {`{"error":""}`, `{"error":{"code":"NOT_FOUND"}}`, `{}`},
}

// mutated lists the schemas whose valid instances are also mutated
// mechanically: every field removed, a field added to every object, every
// value given a wrong type, every timestamp and id malformed. Each mutation
// must fail.
var mutated = []string{
	"Workspace", "Key", "Limits", "WorkspaceInfo", "WorkspaceResponse",
	"Client", "ClientListResponse", "ClientResponse",
	"HealthWorkspace", "HealthWorkspaceResponse", "HealthClient", "HealthClientResponse",
	"Job", "JobListResponse", "JobDetail", "JobDetailResponse",
	"Result", "ResultListResponse", "Alert", "AlertListResponse",
	"Pagination", "Error", "ReportResponse", "ReportError",
}

func parse(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(fill.Replace(s)))
	if err != nil {
		t.Fatalf("bad test instance %s: %v", s, err)
	}
	return v
}

func TestValidInstancesPass(t *testing.T) {
	c := newCompiler(t)
	for name, instances := range valid {
		sch := compile(t, c, "/components/schemas/"+name)
		for i, s := range instances {
			if err := sch.Validate(parse(t, s)); err != nil {
				t.Errorf("%s #%d must pass: %v", name, i, err)
			}
		}
	}
}

func TestInvalidInstancesFail(t *testing.T) {
	c := newCompiler(t)
	for name, instances := range invalid {
		sch := compile(t, c, "/components/schemas/"+name)
		for i, s := range instances {
			if s == "" {
				t.Fatalf("%s #%d: empty instance", name, i)
			}
			if sch.Validate(parse(t, s)) == nil {
				t.Errorf("%s #%d must fail: %.300s", name, i, fill.Replace(s))
			}
		}
	}
}

// mutation is one change to an instance.
type mutation struct {
	what  string
	apply func(root any) any
}

// clone deep-copies a decoded instance.
func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = clone(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = clone(e)
		}
		return s
	}
	return v
}

// at returns a mutation that replaces (or, with del, removes) the node at
// path in a copy of the root.
func at(path []any, what string, change func(parent any, key any) bool) mutation {
	return mutation{what: what, apply: func(root any) any {
		root = clone(root)
		cur := root
		for _, k := range path[:len(path)-1] {
			switch c := cur.(type) {
			case map[string]any:
				cur = c[k.(string)]
			case []any:
				cur = c[k.(int)]
			}
		}
		if !change(cur, path[len(path)-1]) {
			return nil
		}
		return root
	}}
}

func set(v any) func(parent, key any) bool {
	return func(parent, key any) bool {
		switch p := parent.(type) {
		case map[string]any:
			p[key.(string)] = v
		case []any:
			p[key.(int)] = v
		}
		return true
	}
}

func remove(parent, key any) bool {
	p, ok := parent.(map[string]any)
	if !ok {
		return false
	}
	delete(p, key.(string))
	return true
}

func pathString(path []any) string {
	var b strings.Builder
	for _, k := range path {
		fmt.Fprintf(&b, "/%v", k)
	}
	return b.String()
}

// mutations lists the mechanical mutations of an instance.
func mutations(v any, path []any, out []mutation) []mutation {
	here := pathString(path)
	if len(path) > 0 {
		var wrong any
		switch x := v.(type) {
		case string:
			wrong = json.Number("12345")
			if tsRE.MatchString(x) {
				for _, bad := range []string{
					strings.Replace(x, ".", ":", 1)[:19] + "Z", // no milliseconds
					x[:23] + "+00:00",                          // offset instead of Z
					strings.Replace(x, "T", " ", 1),            // space
					x[:23] + "0Z",                              // four fraction digits
					x[:5] + "13" + x[7:],                       // month 13 (format assertion)
					x[:10],                                     // date only
				} {
					out = append(out, at(path, "bad timestamp "+bad+" at "+here, set(bad)))
				}
			}
			if uuidRE.MatchString(x) {
				out = append(out,
					at(path, "uppercase id at "+here, set(strings.ToUpper(x))),
					at(path, "bad id at "+here, set("job-"+x[:8])),
				)
			}
		case json.Number:
			wrong = string(x)
		case bool:
			wrong = strconv.FormatBool(x)
		case nil:
			wrong = true
		default: // object or array
			wrong = "x"
		}
		out = append(out, at(path, fmt.Sprintf("wrong type %T at %s", wrong, here), set(wrong)))
	}
	switch x := v.(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		extra := append(slices.Clone(path), "unexpectedField")
		out = append(out, at(extra, "extra field at "+here, set(json.Number("1"))))
		for _, k := range keys {
			p := append(slices.Clone(path), k)
			if !(k == "parameter" && len(path) > 0 && path[len(path)-1] == "error") {
				out = append(out, at(p, "missing "+pathString(p), remove))
			}
			out = mutations(x[k], p, out)
		}
	case []any:
		for i, e := range x {
			out = mutations(e, append(slices.Clone(path), i), out)
		}
	}
	return out
}

func TestMutatedInstancesFail(t *testing.T) {
	c := newCompiler(t)
	total := 0
	for _, name := range mutated {
		sch := compile(t, c, "/components/schemas/"+name)
		for i, s := range valid[name] {
			inst := parse(t, s)
			ms := mutations(inst, nil, nil)
			if len(ms) < 3 {
				t.Fatalf("%s #%d: only %d mutations", name, i, len(ms))
			}
			for _, m := range ms {
				bad := m.apply(inst)
				if bad == nil {
					continue
				}
				total++
				if sch.Validate(bad) == nil {
					t.Errorf("%s #%d: %s must fail", name, i, m.what)
				}
			}
			if err := sch.Validate(inst); err != nil {
				t.Fatalf("%s #%d: mutations changed the original: %v", name, i, err)
			}
		}
	}
	t.Logf("%d mutated instances refused", total)
}

// TestErrorResponsesNarrow checks that the per-status response schemas
// accept only their codes and messages.
func TestErrorResponsesNarrow(t *testing.T) {
	c := newCompiler(t)
	restErr := func(code, msg, param string) string {
		p := ""
		if param != "" {
			p = `,"parameter":"` + param + `"`
		}
		return `{"error":{"code":"` + code + `","message":"` + msg + `"` + p + `,"requestId":"5f2c9a1be04d00000000002a"}}`
	}
	rest := []struct {
		response string
		pass     []string
		fail     []string
	}{
		{"RestBadRequest", []string{restErr("INVALID_PARAMETER", "from must not be after to", "from"),
			restErr("INVALID_REQUEST", "Malformed HTTP request", "")},
			[]string{restErr("NOT_FOUND", "x", ""), restErr("INVALID_PARAMETER", "x", ""), restErr("INVALID_REQUEST", "x", ""),
				restErr("INVALID_REQUEST", "Malformed HTTP request", "x")}},
		{"RestRequestTimeout", []string{restErr("INVALID_REQUEST", "Request timeout", "")},
			[]string{restErr("INVALID_REQUEST", "Malformed HTTP request", ""), restErr("INVALID_PARAMETER", "Request timeout", "x"), `{"error":"Request timeout"}`}},
		{"RestTooLarge", []string{restErr("INVALID_REQUEST", "Request body too large", "")},
			[]string{restErr("INVALID_REQUEST", "Request timeout", ""), `{"error":"Request body too large"}`}},
		{"HeaderTooLarge", []string{restErr("INVALID_REQUEST", "Request header too large", "")},
			[]string{restErr("INVALID_REQUEST", "Request body too large", ""), `{"error":"Request header too large"}`}},
		{"ReportRequestTimeout", []string{`{"error":"Request timeout"}`, restErr("INVALID_REQUEST", "Request timeout", "")},
			[]string{`{"error":"Timeout"}`, restErr("INVALID_REQUEST", "Malformed HTTP request", "")}},
		{"RestUnauthorized", []string{restErr("UNAUTHORIZED", "Missing or malformed Authorization header", ""),
			restErr("UNAUTHORIZED", "Invalid API key", ""), restErr("UNAUTHORIZED", "API key has expired", "")},
			[]string{restErr("UNAUTHORIZED", "Unauthorized", ""), restErr("INSUFFICIENT_SCOPE", "Invalid API key", "")}},
		{"RestForbidden", []string{restErr("INSUFFICIENT_SCOPE", "x", ""), restErr("PLAN_REQUIRED", "x", ""),
			restErr("WORKSPACE_INACTIVE", "x", "")}, []string{restErr("UNAUTHORIZED", "x", "")}},
		{"RestNotFound", []string{restErr("NOT_FOUND", "Job not found", "")}, []string{restErr("INVALID_PARAMETER", "x", "clientId")}},
		{"RestMethodNotAllowed", []string{restErr("METHOD_NOT_ALLOWED", "Method not allowed", "")}, []string{restErr("NOT_FOUND", "x", "")}},
		{"RestTooManyRequests", []string{restErr("RATE_LIMITED", "x", ""), restErr("QUOTA_EXCEEDED", "x", "")},
			[]string{restErr("INTERNAL_ERROR", "x", "")}},
		{"RestInternalError", []string{restErr("INTERNAL_ERROR", "x", "")}, []string{restErr("RATE_LIMITED", "x", "")}},
		{"ReportMethodNotAllowed", []string{restErr("METHOD_NOT_ALLOWED", "Method not allowed", "")}, []string{`{"error":"Method not allowed"}`}},
		{"ReportBadRequest", []string{`{"error":"Invalid JSON body"}`, `{"error":"status must be one of: ok, warn, failed"}`,
			`{"error":"size_bytes must be a non-negative number"}`, `{"error":"duration_seconds must be a number of seconds between 0 and 604800"}`,
			`{"error":"idempotency_key must be at most 255 characters"}`, `{"error":"idempotency_key must be a string"}`,
			`{"error":"Malformed HTTP request"}`, restErr("INVALID_REQUEST", "Malformed HTTP request", "")},
			[]string{`{"error":"Bad request"}`, restErr("INVALID_PARAMETER", "x", "status"), restErr("INVALID_REQUEST", "Request timeout", "")}},
		{"ReportUnauthorized", []string{`{"error":"Missing or malformed Authorization header"}`, `{"error":"Invalid API key"}`,
			`{"error":"API key has expired"}`}, []string{`{"error":"Unauthorized"}`}},
		{"ReportForbidden", []string{`{"error":"API key cannot use the Report API"}`, `{"error":"Workspace suspended"}`},
			[]string{`{"error":"Forbidden"}`}},
		{"ReportNotFound", []string{`{"error":"Job not found"}`}, []string{`{"error":"Not found"}`}},
		{"ReportTooLarge", []string{`{"error":"Request body too large"}`}, []string{`{"error":"Too large"}`}},
		{"ReportTooManyRequests", []string{`{"error":"Rate limit exceeded — max 60 requests/minute"}`,
			`{"error":"Daily ingest cap (100 reports/job) reached — try again after the trailing 24h window rolls over"}`},
			[]string{`{"error":"Rate limit exceeded - max 60 requests/minute"}`}},
		{"ReportInternalError", []string{`{"error":"Failed to record report"}`}, []string{`{"error":""}`}},
		{"ReportInFlight", []string{`{"error":"A report with this Idempotency-Key is still being processed — retry shortly"}`},
			[]string{`{"error":"Busy"}`}},
	}
	for _, r := range rest {
		passFail(t, compile(t, c, "/components/responses/"+r.response+"/content/application~1json/schema"), r.response, r.pass, r.fail)
	}
}

// ---------------------------------------------------------------- paths

type wantOp struct {
	path, method, scope string
	body                string   // component schema of the 200 body
	query               []string // query parameters, exactly
	pathParam           string
	statuses            []string
}

// restStatuses are every REST operation's answers: 408, 413 and 431 (and
// 400 INVALID_REQUEST) come from the listener, for requests it cannot read
// (docs/decisions.md).
var restStatuses = []string{"200", "400", "401", "403", "404", "405", "408", "413", "429", "431", "500"}

var wantOps = []wantOp{
	{"/workspace", "get", "workspace:read", "WorkspaceResponse", nil, "", restStatuses},
	{"/clients", "get", "clients:read", "ClientListResponse", []string{"status", "search", "needsAttention", "limit", "cursor"}, "", restStatuses},
	{"/clients/{clientId}", "get", "clients:read", "ClientResponse", nil, "clientId", restStatuses},
	{"/clients/{clientId}/health", "get", "health:read", "HealthClientResponse", []string{"days"}, "clientId", restStatuses},
	{"/jobs", "get", "jobs:read", "JobListResponse", []string{"clientId", "status", "vendor", "lastResult", "search", "limit", "cursor"}, "", restStatuses},
	{"/jobs/{jobId}", "get", "jobs:read", "JobDetailResponse", nil, "jobId", restStatuses},
	{"/reports", "get", "reports:read", "ResultListResponse", []string{"clientId", "jobId", "status", "vendor", "from", "to", "limit", "cursor"}, "", restStatuses},
	{"/alerts", "get", "alerts:read", "AlertListResponse", []string{"clientId", "jobId", "status", "severity", "from", "to", "limit", "cursor"}, "", restStatuses},
	{"/health", "get", "health:read", "HealthWorkspaceResponse", []string{"days"}, "", restStatuses},
	{"/jobs/{jobId}/report", "post", "", "ReportResponse", nil, "jobId", []string{"200", "400", "401", "403", "404", "405", "408", "413", "429", "431", "500", "503"}},
	{"/openapi.json", "get", "", "", nil, "", []string{"200", "405"}},
}

// statusEnums are the allowed values of each list endpoint's status
// parameter (api.md 4.2).
var statusEnums = map[string][]string{
	"/clients": {"active", "paused", "archived"},
	"/jobs":    {"healthy", "warning", "failed", "missing", "waiting", "paused"},
	"/reports": {"ok", "warning", "failed"},
	"/alerts":  {"open", "acknowledged", "snoozed", "resolved", "unresolved"},
}

func deref(t *testing.T, doc map[string]any, v any) map[string]any {
	t.Helper()
	m, _ := v.(map[string]any)
	for m != nil {
		r, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		x, err := resolvePointer(doc, r)
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		m, _ = x.(map[string]any)
	}
	return m
}

func TestEveryEndpointIsDescribed(t *testing.T) {
	doc := loadDoc(t)
	paths := doc["paths"].(map[string]any)
	if len(paths) != len(wantOps) {
		t.Errorf("%d paths, want %d", len(paths), len(wantOps))
	}
	for _, w := range wantOps {
		item, _ := paths[w.path].(map[string]any)
		if item == nil {
			t.Errorf("%s is missing", w.path)
			continue
		}
		for k := range item {
			if k != w.method && k != "parameters" {
				t.Errorf("%s: unexpected %q", w.path, k)
			}
		}
		op, _ := item[w.method].(map[string]any)
		if op == nil {
			t.Errorf("%s %s is missing", w.method, w.path)
			continue
		}
		if id, _ := op["operationId"].(string); id == "" {
			t.Errorf("%s: no operationId", w.path)
		}

		// Parameters: the path item's and the operation's together.
		var params []any
		if ps, ok := item["parameters"].([]any); ok {
			params = append(params, ps...)
		}
		if ps, ok := op["parameters"].([]any); ok {
			params = append(params, ps...)
		}
		var query []string
		pathParams := 0
		for _, p := range params {
			pm := deref(t, doc, p)
			name, _ := pm["name"].(string)
			switch pm["in"] {
			case "query":
				query = append(query, name)
				if pm["required"] == true {
					t.Errorf("%s: query parameter %s must be optional", w.path, name)
				}
				if name == "status" {
					sch := pm["schema"].(map[string]any)
					var got []string
					for _, e := range sch["enum"].([]any) {
						got = append(got, e.(string))
					}
					if !slices.Equal(got, statusEnums[w.path]) {
						t.Errorf("%s: status enum %v, want %v", w.path, got, statusEnums[w.path])
					}
				}
			case "path":
				pathParams++
				if name != w.pathParam || pm["required"] != true {
					t.Errorf("%s: path parameter %s", w.path, name)
				}
			case "header":
				if w.method != "post" || name != "Idempotency-Key" {
					t.Errorf("%s: header parameter %s", w.path, name)
				}
			}
		}
		if !slices.Equal(sorted(query), sorted(w.query)) {
			t.Errorf("%s: query parameters %v, want %v", w.path, query, w.query)
		}
		if (w.pathParam != "") != (pathParams == 1) || pathParams > 1 {
			t.Errorf("%s: %d path parameters", w.path, pathParams)
		}

		// Security: the scope as a role; none for the document itself.
		sec, ok := op["security"].([]any)
		if !ok || len(sec) > 1 {
			t.Errorf("%s: security %v", w.path, op["security"])
		} else if w.path == "/openapi.json" {
			if len(sec) != 0 {
				t.Errorf("/openapi.json must need no key")
			}
		} else {
			req, _ := sec[0].(map[string]any)
			roles, ok := req["bearerAuth"].([]any)
			if !ok || (w.scope == "" && len(roles) != 0) || (w.scope != "" && (len(roles) != 1 || roles[0] != w.scope)) {
				t.Errorf("%s: security %v, want bearerAuth [%s]", w.path, sec, w.scope)
			}
		}

		// Responses: exactly the statuses, each with a JSON body and X-Request-Id.
		resps := op["responses"].(map[string]any)
		var got []string
		for code := range resps {
			got = append(got, code)
		}
		if !slices.Equal(sorted(got), sorted(w.statuses)) {
			t.Errorf("%s: responses %v, want %v", w.path, sorted(got), w.statuses)
		}
		for code, r := range resps {
			rm := deref(t, doc, r)
			hs, _ := rm["headers"].(map[string]any)
			mustHeader := func(name string) {
				h := deref(t, doc, hs[name])
				if h == nil || h["required"] != true {
					t.Errorf("%s %s: header %s must be required", w.path, code, name)
				}
			}
			mustHeader("X-Request-Id")
			if w.scope != "" && slices.Contains([]string{"200", "400", "404", "429"}, code) {
				for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
					if code != "400" {
						mustHeader(name)
						continue
					}
					// A listener's 400 (INVALID_REQUEST) comes before the
					// limits: listed, but optional.
					if h := deref(t, doc, hs[name]); h == nil || h["required"] != false {
						t.Errorf("%s %s: header %s must be listed as optional", w.path, code, name)
					}
				}
				for _, name := range []string{"X-Quota-Limit", "X-Quota-Remaining", "X-Quota-Reset"} {
					if h := deref(t, doc, hs[name]); h == nil || h["required"] != false {
						t.Errorf("%s %s: header %s must be listed as optional", w.path, code, name)
					}
				}
			}
			if code == "429" || code == "503" {
				mustHeader("Retry-After")
			}
			if code == "405" {
				mustHeader("Allow")
			}
			content, _ := rm["content"].(map[string]any)
			if content["application/json"] == nil {
				t.Errorf("%s %s: no application/json body", w.path, code)
			}
		}
		if w.body != "" {
			ok200 := deref(t, doc, resps["200"])
			sch := ok200["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
			if sch["$ref"] != "#/components/schemas/"+w.body {
				t.Errorf("%s: 200 body %v, want %s", w.path, sch["$ref"], w.body)
			}
		}
		if w.scope != "" {
			for code, want := range map[string]string{"400": "RestBadRequest", "401": "RestUnauthorized",
				"403": "RestForbidden", "404": "RestNotFound", "405": "RestMethodNotAllowed", "408": "RestRequestTimeout",
				"413": "RestTooLarge", "429": "RestTooManyRequests", "431": "HeaderTooLarge", "500": "RestInternalError"} {
				if r, _ := resps[code].(map[string]any); r["$ref"] != "#/components/responses/"+want {
					t.Errorf("%s %s: %v, want %s", w.path, code, r["$ref"], want)
				}
			}
		}
	}

	// The Report API's body.
	rb := deref(t, doc, paths["/jobs/{jobId}/report"].(map[string]any)["post"].(map[string]any)["requestBody"])
	if rb["required"] != true || rb["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)["$ref"] != "#/components/schemas/ReportRequest" {
		t.Errorf("report request body: %v", rb)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

// TestParameterSchemas checks the query parameters' ranges and defaults.
func TestParameterSchemas(t *testing.T) {
	doc := loadDoc(t)
	c := newCompiler(t)
	params := doc["components"].(map[string]any)["parameters"].(map[string]any)
	cases := []struct {
		param      string
		pass, fail []string
	}{
		{"limit", []string{`1`, `50`, `100`}, []string{`0`, `101`, `"10"`, `1.5`}},
		{"days", []string{`1`, `30`, `90`}, []string{`0`, `91`}},
		{"search", []string{`"a"`, `"` + strings.Repeat("é", 100) + `"`}, []string{`""`, `"` + strings.Repeat("é", 101) + `"`}},
		{"cursor", []string{`"AQID"`}, []string{`""`}},
		{"fromReports", []string{`"2025-03-01"`, `"2025-03-01T00:00:00Z"`, `"2025-03-01T00:00:00.5+01:00"`}, []string{`"yesterday"`, `"2025-3-1"`}},
		{"toAlerts", []string{`"2025-03-01"`}, []string{`""`}},
		{"vendorFilter", []string{`"veeam"`, `"generic"`}, []string{`"Veeam"`, `"bacula"`}},
		{"alertStatus", []string{`"unresolved"`}, []string{`"closed"`}},
		{"severity", []string{`"critical"`, `"warning"`}, []string{`"info"`}},
		{"lastResult", []string{`"none"`}, []string{`"missing"`}},
		{"needsAttention", []string{`true`, `false`}, []string{`"yes"`}},
	}
	for _, tc := range cases {
		if _, ok := params[tc.param].(map[string]any); !ok {
			t.Errorf("parameter %s is missing", tc.param)
			continue
		}
		passFail(t, compile(t, c, "/components/parameters/"+tc.param+"/schema"), tc.param, tc.pass, tc.fail)
	}
	for name, def := range map[string]float64{"limit": 50, "days": 30} {
		d := params[name].(map[string]any)["schema"].(map[string]any)["default"]
		if f, _ := d.(json.Number).Float64(); f != def {
			t.Errorf("%s default %v, want %v", name, d, def)
		}
	}
}
