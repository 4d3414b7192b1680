package transport_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"backupmon/internal/testserver"
)

// Pages go to fasthttp without a copy and their buffers return to a pool
// only once the response is written. Concurrent pages of two workspaces
// must each come back whole and hold only their own workspace's jobs (and
// the race detector sees any buffer reused while it is being written).
func TestRESTPagesUnderConcurrency(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	type ws struct {
		f      testserver.Fixture
		prefix string
	}
	var all []ws
	for w, prefix := range []string{"Alpha", "Bravo"} {
		f := s.Fixture(testserver.FixtureOptions{})
		for i := range 60 {
			s.NewJob(f.WS, f.Client, fmt.Sprintf("%s job %02d %s", prefix, i, strings.Repeat("x", 40*w)), map[string]any{"intervalMinutes": 1440})
		}
		all = append(all, ws{f, prefix})
	}
	const goroutines, each = 8, 60 // 240 requests a workspace: within Pro's 300 a minute
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				w := all[(g+i)%2]
				r, err := rsSend(s, "GET", "/jobs?limit=100", rsAuth(w.f.RestKey))
				if err != nil {
					t.Error(err)
					return
				}
				if r.Status != 200 {
					t.Errorf("%d %s", r.Status, r.Body)
					return
				}
				items, _ := r.JSON["data"].([]any)
				if len(items) != 61 {
					t.Errorf("%s: %d jobs, want 61", w.prefix, len(items))
				}
				for _, it := range items {
					name, _ := it.(map[string]any)["name"].(string)
					if name != "Nightly backup" && !strings.HasPrefix(name, w.prefix+" job ") {
						t.Errorf("%s: job %q of another workspace", w.prefix, name)
					}
				}
			}
		})
	}
	wg.Wait()
}
