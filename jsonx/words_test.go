package jsonx

import (
	"encoding/json"
	"testing"
)

// TestAppendWords: plain words come out as encoding/json writes a string
// slice, the empty list as [] (never null), after what b held.
func TestAppendWords(t *testing.T) {
	for _, words := range [][]string{{}, {"mon"}, {"mon", "tue", "sun"}, {"reports:write", "read"}} {
		want, err := json.Marshal(words)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendWords([]byte("x:"), words); string(got) != "x:"+string(want) {
			t.Errorf("AppendWords(%q) = %s, want x:%s", words, got, want)
		}
	}
}
