package state

import "testing"

// TestReportSource: a report's source is the same interned index whether
// it was sent with a key (whose index is then kept on it), without, or
// with a key whose kept index is out of date.
func TestReportSource(t *testing.T) {
	x := newSDWorld(t)
	a := &Key{Source: "api:aaaa"}
	b := &Key{Source: "api:bbbb"}
	for i, c := range []struct {
		key    *Key
		source string
		want   string
	}{
		{nil, "mail", "mail"},
		{a, "api:aaaa", "api:aaaa"},
		{a, "api:aaaa", "api:aaaa"}, // from the key
		{b, "api:bbbb", "api:bbbb"},
		{nil, "api:aaaa", "api:aaaa"},
		{a, "api:cccc", "api:cccc"}, // a record's source wins over the key's
		{b, "api:bbbb", "api:bbbb"},
	} {
		if i == 6 {
			b.sourceIx = 1 // out of date: "mail"
		}
		x.at += MsPerDay
		r := &Report{JobID: x.j.ID, ResultID: x.ids.Next(x.at), Status: ResultOK, ReceivedAt: x.at, CompletedAt: x.at, DurationSeconds: -1, SizeBytes: -1, Source: c.source}
		r.SentWith(c.key)
		x.apply(r)
		res := x.j.Results[len(x.j.Results)-1]
		if got := x.w.Source(res.Source); got != c.want {
			t.Fatalf("report %d: source %q, want %q", i, got, c.want)
		}
	}
	if got := x.w.Source(uint16(a.sourceIx - 1)); got != "api:aaaa" {
		t.Fatalf("key a keeps the index of %q", got)
	}
	if len(x.w.sources) != 4 {
		t.Fatalf("%d sources interned, want 4: %q", len(x.w.sources), x.w.sources)
	}
}
