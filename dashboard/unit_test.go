package dashboard

import (
	"testing"
	"time"

	"backupmon/engine"
)

func TestLocalPath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/jobs?status=failed", "/jobs?status=failed"},
		{"", "/"},
		{"//evil.example/x", "/"},
		{"/\\evil.example", "/"},
		{"https://evil.example/", "/"},
		{"/ok\r\nSet-Cookie: x=y", "/"},
		{"jobs", "/"},
	} {
		if got := localPath(tc.in); got != tc.want {
			t.Errorf("localPath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTrimQueue(t *testing.T) {
	items := func(n int) []engine.QueueItem { return make([]engine.QueueItem, n) }
	q := engine.Queue{Groups: []engine.QueueGroup{{ClientName: "a", Items: items(3)}, {ClientName: "b", Items: items(4)}, {ClientName: "c", Items: items(2)}}}
	if hidden := trimQueue(&q, 5); hidden != 4 {
		t.Fatalf("hidden %d, want 4", hidden)
	}
	if len(q.Groups) != 2 || len(q.Groups[0].Items) != 3 || len(q.Groups[1].Items) != 2 {
		t.Fatalf("groups after trim: %+v", q.Groups)
	}
	q = engine.Queue{Groups: []engine.QueueGroup{{Items: items(2)}}}
	if hidden := trimQueue(&q, 500); hidden != 0 || len(q.Groups[0].Items) != 2 {
		t.Fatalf("trim of a short queue: hidden %d, %+v", hidden, q.Groups)
	}
}

// TestThrottle: the sixth attempt for one address within the burst is
// refused, another address is not, and a refused attempt charges neither
// bucket.
func TestThrottle(t *testing.T) {
	th := newThrottle()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range userBurst {
		if !th.allow("10.0.0.1", "a@x.test", "", now) {
			t.Fatalf("attempt %d refused", i+1)
		}
	}
	if th.allow("10.0.0.2", "a@x.test", "", now) {
		t.Fatal("sixth attempt for one user allowed from another address")
	}
	if !th.allow("10.0.0.1", "b@x.test", "", now) {
		t.Fatal("another user from the same address refused within the address's burst")
	}
	if !th.allow("10.0.0.2", "a@x.test", "", now.Add(userEvery)) {
		t.Fatal("attempt refused after the user's bucket refilled one token")
	}
	for i := 0; i < addrBurst; i++ {
		th.allow("10.0.0.9", "u"+string(rune('a'+i))+"@x.test", "", now)
	}
	if th.allow("10.0.0.9", "fresh@x.test", "", now) {
		t.Fatal("an address past its burst allowed")
	}
	// A device's attempts take from its own bucket only: the user's and
	// the address's empty buckets do not hold it up, and it does not
	// spend them.
	for i := range userBurst {
		if !th.allow("10.0.0.9", "a@x.test", "dev1", now) {
			t.Fatalf("device attempt %d refused", i+1)
		}
	}
	if th.allow("10.0.0.9", "a@x.test", "dev1", now) {
		t.Fatal("a device past its burst allowed")
	}
	if !th.allow("10.0.0.9", "a@x.test", "dev2", now) {
		t.Fatal("another device refused")
	}
}

// TestPagesParse: every page template parses with the layout, and a
// template's data errors surface at render (not a blank page).
func TestPagesParse(t *testing.T) {
	p := loadPages()
	for _, name := range pageNames {
		if p.sets[name] == nil || p.sets[name].Lookup("content") == nil {
			t.Errorf("page %s has no content template", name)
		}
	}
}

// TestAddrKey: the login throttle counts IPv4 addresses one by one and
// IPv6 addresses by their /64.
func TestAddrKey(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"192.0.2.1", "192.0.2.1", true},
		{"192.0.2.1", "192.0.2.2", false},
		{"::ffff:192.0.2.1", "192.0.2.1", true},
		{"2001:db8:1:2:aaaa::1", "2001:db8:1:2:bbbb:cccc:dddd:2", true},
		{"2001:db8:1:2::1", "2001:db8:1:3::1", false},
		{"::1", "::2", true},
		{"not an address", "not an address", true},
	} {
		if got := addrKey(tc.a) == addrKey(tc.b); got != tc.same {
			t.Errorf("addrKey(%q) = %q, addrKey(%q) = %q: same %v, want %v", tc.a, addrKey(tc.a), tc.b, addrKey(tc.b), got, tc.same)
		}
	}
}
