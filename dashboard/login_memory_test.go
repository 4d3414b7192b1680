package dashboard_test

import (
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"backupmon/dashboard"
	"backupmon/engine"
	"backupmon/internal/testserver"
	"backupmon/transport"
)

// TestLoginAttemptsKeepNoAddress: whoever reaches the login form, with no
// account and no session, may send an address as long as a body may be;
// the throttle keeps a bucket per address tried, but not the address:
// 40 logins with 512 KiB addresses leave the server's heap as it was
// (they were kept whole before, each until 100,000 buckets were held).
func TestLoginAttemptsKeepNoAddress(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{Configure: func(cfg *transport.Config, eng *engine.Engine) {
		cfg.Dashboard = dashboard.New(dashboard.Config{Engine: eng, Insecure: true}).Handler()
	}})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	login := func(email string) int {
		t.Helper()
		resp, err := client.PostForm(srv.PublicURL+"/login", url.Values{"email": {email}, "password": {"guess"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	const n, size = 40, 512 << 10
	refused := 0
	for i := range n {
		email := strings.Repeat(string(rune('a'+i%26)), size-len("@x.test")-1) + string(rune('a'+i/26)) + "@x.test"
		if login(email) == http.StatusTooManyRequests {
			refused++
		}
	}
	if refused == 0 {
		t.Errorf("%d logins from one address in a moment: none refused", n)
	}
	if grew := int64(heap()) - int64(before); grew > n*size/4 {
		t.Errorf("%d logins with %d-byte addresses left the heap %d bytes larger: the addresses are kept", n, size, grew)
	}
}
