package dashboard

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
)

// FuzzParsePending: the second step's token, which comes back from the
// browser, never panics the parser, and what it reads prints back to the
// very token (one spelling per token, so the MAC signs exactly what was
// read).
func FuzzParsePending(f *testing.F) {
	mac := base64.RawURLEncoding.EncodeToString(make([]byte, 32))
	for _, seed := range []string{
		"01a1ab94-8600-7000-87cb-cf612a81696b.01a1ab94-8600-7000-87cb-cf612a81696c.1762344000000." + mac,
		"a.b.1." + mac, "a.b.01." + mac, "a.b.-1." + mac, "...", "", "a.b.c.d.e", "a.b.1." + mac + "=",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, token string) {
		p, ok := parsePending(token)
		if !ok {
			return
		}
		again := p.workspace + "." + p.user + "." + strconv.FormatInt(p.expires, 10) + "." + base64.RawURLEncoding.EncodeToString(p.mac)
		if again != token || p.body != token[:strings.LastIndexByte(token, '.')] || len(p.mac) != 32 {
			t.Fatalf("parsePending(%q) = %+v, which prints as %q", token, p, again)
		}
	})
}

func TestParsePending(t *testing.T) {
	mac := base64.RawURLEncoding.EncodeToString(make([]byte, 32))
	for _, tc := range []struct {
		token string
		ok    bool
	}{
		{"w.u.1762344000000." + mac, true},
		{"w.u.01." + mac, false},       // two spellings of one number
		{"w.u.1." + mac[:42], false},   // a short MAC
		{".u.1." + mac, false},         // no workspace
		{"w.u.1." + mac + ".x", false}, // a fifth part
		{"w.u.x." + mac, false},        // not a number
	} {
		t.Run(tc.token, func(t *testing.T) {
			if _, ok := parsePending(tc.token); ok != tc.ok {
				t.Errorf("parsePending(%q) ok = %v, want %v", tc.token, ok, tc.ok)
			}
		})
	}
}
