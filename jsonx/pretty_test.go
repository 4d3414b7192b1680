package jsonx_test

import (
	"bytes"
	"strings"
	"testing"

	"backupmon/jsonx"
)

func TestPretty(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"object", `{"a":1,"b":[true,null,"x"]}`, "{\n  \"a\": 1,\n  \"b\": [\n    true,\n    null,\n    \"x\"\n  ]\n}"},
		{"empty ones", `{"a":{},"b":[]}`, "{\n  \"a\": {},\n  \"b\": []\n}"},
		{"scalar", `"a<b & c>d"`, `"a<b & c>d"`},
		{"escapes kept", `{"a":"\u003c\ud83d\ude00\n"}`, "{\n  \"a\": \"\\u003c\\ud83d\\ude00\\n\"\n}"},
		{"space dropped before, kept after", " \n{ \"a\" : 1 }\n", "{\n  \"a\": 1\n}\n"},
		{"invalid kept as it is", `{"a":`, `{"a":`},
		{"two values kept as they are", `{}{}`, `{}{}`},
		{"invalid UTF-8 kept", "[\"\xff\"]", "[\n  \"\xff\"\n]"},
		{"empty", ``, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := jsonx.Pretty([]byte(tc.in)); string(got) != tc.want {
				t.Errorf("Pretty(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	// The 10000-deep seeds take half a minute to indent under the race
	// detector; 300 levels show the nesting as well.
	seeds := append([]string{strings.Repeat("[", 300) + strings.Repeat("]", 300), strings.Repeat(`{"a":`, 300) + "1" + strings.Repeat("}", 300)}, jsonSeeds...)
	for _, s := range seeds {
		if len(s) > 10000 {
			continue
		}
		if got, want := jsonx.Pretty([]byte(s)), stdlibPretty([]byte(s)); !bytes.Equal(got, want) {
			t.Errorf("Pretty(%.60q) = %.80q, encoding/json %.80q", s, got, want)
		}
	}
}
