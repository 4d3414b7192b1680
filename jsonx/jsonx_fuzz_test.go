package jsonx_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"backupmon/jsonx"
)

// jsonSeeds are inputs where JSON decoders are known to differ: odd numbers,
// escapes, invalid UTF-8, duplicate keys, nesting, whitespace, trailing
// bytes, and the shapes the service decodes.
var jsonSeeds = []string{
	``, ` `, `null`, `true`, `false`, `0`, `-0`, `1`, `-1`, `1.5`, `1e400`, `-1e400`, `1e-400`,
	`01`, `1.`, `.5`, `+1`, `1e`, `1E+2`, `0x10`, `NaN`, `Infinity`, `-`, `--1`,
	`123456789012345678901234567890`, `9007199254740993`, `1.7976931348623157e308`, `4.9e-324`,
	`""`, `"a"`, `"\u00e9"`, `"\ud83d\ude00"`, `"\ud800"`, `"\udc00"`, `"\ud800\u0041"`,
	`"\u0000"`, `"\x"`, `"\/"`, `"\'"`, "\"\t\"", "\"\x01\"", "\"\x7f\"", "\"\xff\"", "\"\xc3\x28\"",
	"\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\u2028\u2029\"", `"<>&"`, `"\u003c"`,
	`[]`, `[1,2]`, `[1,]`, `[,1]`, `[1 2]`, `["a","b"]`, `["a",1]`, `[null]`, `["a",null]`,
	`{}`, `{"a":1}`, `{"a":1,}`, `{"a"}`, `{"a":}`, `{a:1}`, `{'a':1}`, `{"a":1 "b":2}`,
	`{"a":1,"a":2}`, `{"a":{"b":1},"a":[1]}`, `{"a":null}`, `{"\u0061":1,"a":2}`, `{"":1}`,
	`{"a":1}x`, `{"a":1}{}`, `{"a":1} `, " \t\r\n{\"a\":1}\n", "\ufeff{}", `{"a":1}/**/`,
	"{\"a\":1}\x00", `{"a":"b\"c"}`, `{"status":"ok","size_bytes":10,"duration_seconds":1.5}`,
	`{"STATUS":"ok"}`, `{"a":tru}`, `{"a":nul}`, `{"a":falsey}`, `[truex]`, `{"a":-}`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	`{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	`{"a":` + strings.Repeat(`{"a":`, 10001) + `1` + strings.Repeat("}", 10002),
	`{"a":"` + strings.Repeat("x", 300) + `"}`,
	"{\"a\":\"\xff\"}", "{\"\xff\":1}", `{"a":"\ud800"}`,
}

// FuzzUnmarshalMatchesStdlib checks jsonx (goccy/go-json underneath) against
// encoding/json on arbitrary bytes, for the ways the service uses it:
// Unmarshal into any, map[string]RawMessage, string and []string; Valid; and
// Marshal of what was decoded and of structs.
func FuzzUnmarshalMatchesStdlib(f *testing.F) {
	for _, s := range jsonSeeds {
		// The 10000-deep seeds take a quarter second each and slow the
		// fuzzer to a crawl; TestUnmarshalTable checks them.
		if len(s) < 1000 {
			f.Add([]byte(s))
		}
	}
	f.Add([]byte(`{"a":[[[[[[[[[[[[[[[[[[[[{"b":[null]}]]]]]]]]]]]]]]]]]]]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := jsonx.Valid(data), json.Valid(data); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json says %v", data, got, want)
		}
		if got, want := jsonx.Pretty(data), stdlibPretty(data); !bytes.Equal(got, want) {
			t.Errorf("Pretty(%q):\n jsonx         %q\n encoding/json %q", data, got, want)
		}

		var gotAny, wantAny any
		gotErr, wantErr := jsonx.Unmarshal(data, &gotAny), json.Unmarshal(data, &wantAny)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("Unmarshal(%q) into any: jsonx err %v, encoding/json err %v", data, gotErr, wantErr)
		}
		if gotErr == nil {
			if !reflect.DeepEqual(gotAny, wantAny) {
				t.Fatalf("Unmarshal(%q) into any: jsonx %#v, encoding/json %#v", data, gotAny, wantAny)
			}
			checkMarshal(t, gotAny)
		}

		var gotMap map[string]jsonx.RawMessage
		var wantMap map[string]json.RawMessage
		gotErr, wantErr = jsonx.Unmarshal(data, &gotMap), json.Unmarshal(data, &wantMap)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("Unmarshal(%q) into map[string]RawMessage: jsonx err %v, encoding/json err %v", data, gotErr, wantErr)
		}
		if gotErr == nil {
			if (gotMap == nil) != (wantMap == nil) || len(gotMap) != len(wantMap) {
				t.Fatalf("Unmarshal(%q) into map[string]RawMessage: jsonx %q, encoding/json %q", data, gotMap, wantMap)
			}
			for k, w := range wantMap {
				g, ok := gotMap[k]
				if !ok || !bytes.Equal(g, w) {
					t.Fatalf("Unmarshal(%q) into map[string]RawMessage: key %q: jsonx %q (present %v), encoding/json %q", data, k, g, ok, w)
				}
			}
		}

		var gotStr, wantStr string
		gotErr, wantErr = jsonx.Unmarshal(data, &gotStr), json.Unmarshal(data, &wantStr)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("Unmarshal(%q) into string: jsonx err %v, encoding/json err %v", data, gotErr, wantErr)
		}
		if gotErr == nil && gotStr != wantStr {
			t.Fatalf("Unmarshal(%q) into string: jsonx %q, encoding/json %q", data, gotStr, wantStr)
		}

		var gotList, wantList []string
		gotErr, wantErr = jsonx.Unmarshal(data, &gotList), json.Unmarshal(data, &wantList)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("Unmarshal(%q) into []string: jsonx err %v, encoding/json err %v", data, gotErr, wantErr)
		}
		if gotErr == nil && !reflect.DeepEqual(gotList, wantList) {
			t.Fatalf("Unmarshal(%q) into []string: jsonx %q, encoding/json %q", data, gotList, wantList)
		}

		// The service marshals structs whose strings come from requests
		// (names, notes, summaries): any bytes must come out as the JSON
		// encoding/json writes (without HTML escaping).
		s := string(data)
		half := len(data) / 2
		n := int64(len(data))
		checkMarshal(t, marshalProbe{A: s, B: []string{s[:half], s[half:]}, C: &n, D: float64(n) / 7, E: map[string]string{s: s[half:]}})
	})
}

type marshalProbe struct {
	A string            `json:"a"`
	B []string          `json:"b"`
	C *int64            `json:"c"`
	D float64           `json:"d"`
	E map[string]string `json:"e"`
	F *string           `json:"f"`
	G []int             `json:"g,omitempty"`
}

// checkMarshal compares jsonx.Marshal with encoding/json (HTML escaping off)
// byte for byte, and decodes the result back.
func checkMarshal(t *testing.T, v any) {
	t.Helper()
	got, err := jsonx.Marshal(v)
	if err != nil {
		t.Fatalf("Marshal(%#v): %v", v, err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encoding/json Marshal(%#v): %v", v, err)
	}
	want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if !bytes.Equal(got, want) {
		t.Fatalf("Marshal(%#v):\n jsonx         %q\n encoding/json %q", v, got, want)
	}
	if !json.Valid(got) {
		t.Fatalf("Marshal(%#v) wrote invalid JSON %q", v, got)
	}
}

// stdlibPretty is what jsonx.Pretty stands for: encoding/json's Indent with
// two spaces, or data as it is when Indent fails.
func stdlibPretty(data []byte) []byte {
	var b bytes.Buffer
	if json.Indent(&b, data, "", "  ") != nil {
		return data
	}
	return b.Bytes()
}

// TestUnmarshalTable pins the cases the fuzz target found or that matter to
// the service, with what encoding/json does.
func TestUnmarshalTable(t *testing.T) {
	for _, s := range jsonSeeds {
		var a, b any
		errA, errB := jsonx.Unmarshal([]byte(s), &a), json.Unmarshal([]byte(s), &b)
		if (errA == nil) != (errB == nil) {
			t.Errorf("Unmarshal(%.60q) into any: jsonx err %v, encoding/json err %v", s, errA, errB)
			continue
		}
		if errA == nil && !reflect.DeepEqual(a, b) {
			t.Errorf("Unmarshal(%.60q) into any: jsonx %#v, encoding/json %#v", s, a, b)
		}
	}
	// Duplicate keys: the last one wins, as in encoding/json.
	var m map[string]jsonx.RawMessage
	if err := jsonx.Unmarshal([]byte(`{"status":"failed","status":"ok"}`), &m); err != nil || string(m["status"]) != `"ok"` {
		t.Errorf("duplicate keys: %q, %v; want the last", m, err)
	}
	// Escaped keys are unescaped.
	m = nil
	if err := jsonx.Unmarshal([]byte(`{"st\u0061tus":"ok"}`), &m); err != nil || string(m["status"]) != `"ok"` {
		t.Errorf("escaped key: %q, %v", m, err)
	}
	// Invalid UTF-8 in a string becomes U+FFFD, as in encoding/json.
	var s string
	if err := jsonx.Unmarshal([]byte("\"a\xffb\""), &s); err != nil || s != "a\uFFFDb" || !utf8.ValidString(s) {
		t.Errorf("invalid UTF-8: %q, %v; want %q", s, err, "a\uFFFDb")
	}
}
