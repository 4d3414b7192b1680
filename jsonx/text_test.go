package jsonx

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValidText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{`{"a":"plain"}`, true},
		{`{"a":"caf\u00e9 é"}`, true},
		{`{"a":"\ud83d\ude00"}`, true},
		{`{"a":"\uD83D\uDE00"}`, true},
		{`{"a":"\\ud800"}`, true}, // an escaped backslash, then text
		{`{"a":"\\\ud800"}`, false},
		{`{"a":"\ud800"}`, false},
		{`{"a":"\ud800x"}`, false},
		{`{"a":"\ud800\u0041"}`, false},
		{`{"a":"\udc00"}`, false},
		{`{"a":"\ude00\ud83d"}`, false},
		{`{"a":"\ud8`, true}, // not JSON: for the parser to refuse
		{"{\"a\":\"\xff\"}", false},
		{"{\"a\":\"\xed\xa0\x80\"}", false}, // a surrogate in UTF-8
	} {
		if got := ValidText([]byte(tc.in)); got != tc.want {
			t.Errorf("ValidText(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// FuzzValidText checks ValidText against decoding: a valid text's strings
// decode without a replacement character that was not written as one.
func FuzzValidText(f *testing.F) {
	f.Add(`"\ud83d\ude00"`)
	f.Add(`"\ud800"`)
	f.Add("\"\xff\"")
	f.Fuzz(func(t *testing.T, s string) {
		var v string
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		ok := ValidText([]byte(s))
		if !ok {
			return
		}
		// Valid text: re-encoding the decoded string and decoding again
		// gives the same string, and it is valid UTF-8 with no U+FFFD
		// that the input did not spell.
		if !utf8.ValidString(v) {
			t.Fatalf("ValidText(%q) but it decodes to invalid UTF-8", s)
		}
		for _, r := range v {
			if r == utf8.RuneError && !containsReplacement(s) {
				t.Fatalf("ValidText(%q) but decoding replaced something", s)
			}
		}
	})
}

// containsReplacement reports whether s spells U+FFFD, as itself or as an
// escape in any case.
func containsReplacement(s string) bool {
	return strings.Contains(s, "\uFFFD") || strings.Contains(strings.ToLower(s), `\ufffd`)
}
