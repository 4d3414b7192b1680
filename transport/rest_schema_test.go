package transport_test

// Every REST answer the rest_*_test.go files receive is validated against
// the OpenAPI document (docs/openapi.json, embedded as docs.OpenAPI) with a
// JSON Schema 2020-12 validator: the response schema of the operation and
// status, so that the document and the server cannot drift apart.

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"backupmon/docs"
	"backupmon/internal/testserver"
)

// rsDocURL names the document as a schema resource; it is never fetched.
const rsDocURL = "https://backupmon.invalid/openapi.json"

// rsErrorSchema is the pointer of the REST error body, for answers of paths
// the document does not describe (unknown paths).
const rsErrorSchema = "/components/schemas/Error"

var rsSchemas struct {
	once     sync.Once
	err      error
	doc      map[string]any
	compiler *jsonschema.Compiler
	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
	used     map[string]int // pointer → answers validated with it
}

func rsLoadSchemas() error {
	s := &rsSchemas
	s.once.Do(func() {
		if err := json.Unmarshal(docs.OpenAPI, &s.doc); err != nil {
			s.err = err
			return
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(docs.OpenAPI))
		if err != nil {
			s.err = err
			return
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		if s.err = c.AddResource(rsDocURL, inst); s.err != nil {
			return
		}
		s.compiler = c
		s.compiled = map[string]*jsonschema.Schema{}
		s.used = map[string]int{}
	})
	return s.err
}

// rsPointerToken escapes a JSON pointer token.
func rsPointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// rsSchemaFor returns the pointer of the schema that describes an answer
// to method path (below /api/v1, query included) with status, or an
// explanation of why the document has none.
func rsSchemaFor(method, path string, status int) (string, string) {
	doc := rsSchemas.doc
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	paths, _ := doc["paths"].(map[string]any)
	tmpl := ""
	for p := range paths {
		if rsMatchTemplate(p, path) {
			tmpl = p
			break
		}
	}
	if tmpl == "" {
		return rsErrorSchema, "" // an unknown path: the REST error shape
	}
	item, _ := paths[tmpl].(map[string]any)
	m := strings.ToLower(method)
	op, _ := item[m].(map[string]any)
	opPtr := "/paths/" + rsPointerToken(tmpl) + "/" + m
	if op == nil {
		if status != 405 {
			return "", method + " " + tmpl + " is not in the document and answered " + strconv.Itoa(status)
		}
		// Another method on a described path: the GET operation's 405.
		op, _ = item["get"].(map[string]any)
		opPtr = "/paths/" + rsPointerToken(tmpl) + "/get"
		if op == nil {
			return "", "no GET operation for " + tmpl
		}
	}
	responses, _ := op["responses"].(map[string]any)
	code := strconv.Itoa(status)
	resp, ok := responses[code].(map[string]any)
	ptr := opPtr + "/responses/" + code
	if !ok {
		return "", method + " " + tmpl + ": status " + code + " is not described"
	}
	if ref, ok := resp["$ref"].(string); ok {
		ptr = strings.TrimPrefix(ref, "#")
		resp = rsResolve(doc, ptr)
		if resp == nil {
			return "", "unresolvable " + ref
		}
	}
	content, _ := resp["content"].(map[string]any)
	if _, ok := content["application/json"]; !ok {
		return "", ptr + " has no application/json content"
	}
	return ptr + "/content/application~1json/schema", ""
}

// rsResolve returns the object at a JSON pointer of the document.
func rsResolve(doc map[string]any, ptr string) map[string]any {
	var cur any = doc
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[tok]
	}
	m, _ := cur.(map[string]any)
	return m
}

// rsMatchTemplate reports whether path fits an OpenAPI path template
// ({name} matches one non-empty segment).
func rsMatchTemplate(tmpl, path string) bool {
	ts, ps := strings.Split(tmpl, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return false
	}
	for i := range ts {
		if strings.HasPrefix(ts[i], "{") && strings.HasSuffix(ts[i], "}") {
			if ps[i] == "" {
				return false
			}
			continue
		}
		if ts[i] != ps[i] {
			return false
		}
	}
	return true
}

// rsValidate validates an answer's body against the document's schema for
// its operation and status (api.md 9). It only reports, so it may run on
// any goroutine.
func rsValidate(t testing.TB, method, path string, r testserver.Response) {
	t.Helper()
	if method == "HEAD" {
		return
	}
	if err := rsLoadSchemas(); err != nil {
		t.Errorf("docs/openapi.json: %v", err)
		return
	}
	ptr, why := rsSchemaFor(method, path, r.Status)
	if why != "" {
		t.Errorf("%s %s: %d: the document does not describe this answer: %s", method, path, r.Status, why)
		return
	}
	s := &rsSchemas
	s.mu.Lock()
	sch, ok := s.compiled[ptr]
	var err error
	if !ok {
		sch, err = s.compiler.Compile(rsDocURL + "#" + ptr)
		if err == nil {
			s.compiled[ptr] = sch
		}
	}
	s.used[ptr]++
	s.mu.Unlock()
	if err != nil {
		t.Errorf("compile %s: %v", ptr, err)
		return
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.Body))
	if err != nil {
		t.Errorf("%s %s: body is not JSON: %v", method, path, err)
		return
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("%s %s: %d answer does not fit %s:\n%v\nbody: %.2000s", method, path, r.Status, ptr, err, r.Body)
	}
}

// TestRESTSchemaValidatorBites makes sure the validation above refuses
// answers that break the contract, so that a green run means something.
func TestRESTSchemaValidatorBites(t *testing.T) {
	s, f := startFixture(t)
	admReport(s, f.Job, f.ReportKey, "failed")
	for path := range rsPaths(f.Client, f.Job) {
		r := rsGet(s, f.RestKey, path)
		if r.Status != 200 {
			t.Fatalf("%s: %d", path, r.Status)
		}
		ptr, why := rsSchemaFor("GET", path, 200)
		if why != "" {
			t.Fatalf("%s: %s", path, why)
		}
		sch, err := rsSchemas.compiler.Compile(rsDocURL + "#" + ptr)
		if err != nil {
			t.Fatal(err)
		}
		// Each broken copy must be refused.
		for what, body := range map[string]string{
			"a member added":        strings.Replace(string(r.Body), `{"data":{`, `{"data":{"extra":1,`, 1),
			"a time without ms":     strings.Replace(string(r.Body), `.000Z"`, `Z"`, 1),
			"an id not UUID-shaped": strings.Replace(string(r.Body), `"id":"`, `"id":"x`, 1),
			"data null":             `{"data":null}`,
			"no data":               `{}`,
		} {
			if body == string(r.Body) {
				continue // nothing of that kind in this answer
			}
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
			if err != nil {
				t.Fatalf("%s %s: %v", path, what, err)
			}
			if sch.Validate(inst) == nil {
				t.Errorf("%s: the schema accepts %s: %.300s", path, what, body)
			}
		}
	}
	// An error body with a parameter it must not have.
	r := rsGet(s, f.RestKey, "/clients/nope")
	ptr, _ := rsSchemaFor("GET", "/clients/x", 404)
	sch, err := rsSchemas.compiler.Compile(rsDocURL + "#" + ptr)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(r.Body), `"message"`, `"parameter":"x","message"`, 1)
	inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(bad))
	if sch.Validate(inst) == nil {
		t.Errorf("the 404 schema accepts a parameter: %s", bad)
	}
}
