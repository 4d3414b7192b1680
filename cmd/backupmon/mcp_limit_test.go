package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// mcpRateLimit: the assistant server takes 300 requests a minute from the
// assistant keys of one workspace, whatever their number; the 301st gets 429
// RATE_LIMITED with Retry-After, another workspace is not affected, and the
// next minute starts afresh.
func mcpRateLimit(t *testing.T, s *dashServer) {
	w := s.workspace(t, "mcplimit", nil)
	k1 := s.mcpNewKey(t, w, "first", "read-only")
	k2 := s.mcpNewKey(t, w, "second", "read-only")
	other := s.workspace(t, "mcplimitother", nil)
	k3 := s.mcpNewKey(t, other, "other", "read-only")
	// To the start of a minute, so that all 300 fall in it.
	now := s.advance(t, 0)
	s.advance(t, 60-now.Second())

	const ping = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for i := range 300 {
		k := k1
		if i%2 == 1 {
			k = k2
		}
		if resp, b := s.mcpRaw(t, "POST", "Bearer "+k.secret, ping); resp.StatusCode != 200 {
			t.Fatalf("request %d of the minute: %d %s", i+1, resp.StatusCode, b)
		}
	}
	limited := func(what string, resp *http.Response, b []byte, retry int) {
		t.Helper()
		var e mcpRESTError
		err := json.Unmarshal(b, &e)
		msg := fmt.Sprintf("Rate limit exceeded: 300 assistant requests per minute for the workspace; retry after %d seconds", retry)
		if resp.StatusCode != 429 || err != nil || e.Error["code"] != "RATE_LIMITED" || e.Error["message"] != msg ||
			e.Error["requestId"] == nil || len(e.Error) != 3 || resp.Header.Get("Retry-After") != fmt.Sprint(retry) {
			t.Errorf("%s: %d Retry-After %q %s\nwant 429 Retry-After %d RATE_LIMITED %q", what, resp.StatusCode, resp.Header.Get("Retry-After"), b, retry, msg)
		}
	}
	for _, k := range []mcpKey{k1, k2} {
		resp, b := s.mcpRaw(t, "POST", "Bearer "+k.secret, ping)
		limited("the 301st request with key "+k.prefix, resp, b, 60)
	}
	if resp, b := s.mcpRaw(t, "POST", "Bearer "+k3.secret, ping); resp.StatusCode != 200 {
		t.Errorf("another workspace's key in the same minute: %d %s", resp.StatusCode, b)
	}
	s.advance(t, 45)
	resp, b := s.mcpRaw(t, "POST", "Bearer "+k1.secret, ping)
	limited("45 s later", resp, b, 15)
	s.advance(t, 15)
	if resp, b := s.mcpRaw(t, "POST", "Bearer "+k1.secret, ping); resp.StatusCode != 200 {
		t.Errorf("the next minute: %d %s", resp.StatusCode, b)
	}
}
