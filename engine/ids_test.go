package engine

import (
	"backupmon/state"
	"regexp"
	"strings"
	"testing"
)

var uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func idMs(id state.ID) int64 {
	return int64(id[0])<<40 | int64(id[1])<<32 | int64(id[2])<<24 | int64(id[3])<<16 | int64(id[4])<<8 | int64(id[5])
}

func TestIDsAreUUIDv7AndIncrease(t *testing.T) {
	g := state.NewIDGen()
	base := int64(1_750_000_000_000)
	// Many in one millisecond (past the 12-bit counter), then the clock
	// going back, then forward again.
	var times []int64
	for range 10000 {
		times = append(times, base)
	}
	for i := range 100 {
		times = append(times, base-int64(i)*1000)
	}
	times = append(times, base+1, base+1, base+86_400_000, 0, base+86_400_000)
	var prev state.ID
	for i, ms := range times {
		id := g.Next(ms)
		s := id.String()
		if !uuidV7.MatchString(s) {
			t.Fatalf("id %d = %s: not a UUID version 7 with the RFC 4122 variant", i, s)
		}
		if id[6]>>4 != 7 || id[8]>>6 != 2 {
			t.Fatalf("id %d = %s: version %d, variant bits %b", i, s, id[6]>>4, id[8]>>6)
		}
		if i > 0 && string(id[:]) <= string(prev[:]) {
			t.Fatalf("id %d = %s does not sort after %s (at %d ms)", i, s, prev, ms)
		}
		if idMs(id) < ms {
			t.Fatalf("id %d = %s carries %d ms, made at %d", i, s, idMs(id), ms)
		}
		// Text order is byte order.
		if i > 0 && s <= prev.String() {
			t.Fatalf("id %d: text %s does not sort after %s", i, s, prev)
		}
		back, ok := state.ParseID(s)
		if !ok || back != id {
			t.Fatalf("ParseID(%s) = %v, %v", s, back, ok)
		}
		prev = id
	}
	// The time in an id is the time it was made, while the counter lasts.
	g = state.NewIDGen()
	if id := g.Next(base); idMs(id) != base {
		t.Errorf("first id carries %d ms, want %d", idMs(id), base)
	}
	// The counter spills into the next millisecond after 4096 ids.
	for range 4095 {
		g.Next(base)
	}
	if id := g.Next(base); idMs(id) != base+1 {
		t.Errorf("id 4097 of one millisecond carries %d ms, want %d", idMs(id), base+1)
	}
}

func TestIDGenObserve(t *testing.T) {
	g := state.NewIDGen()
	other := state.NewIDGen()
	var seen state.ID
	for range 5000 {
		seen = other.Next(2_000_000_000_000)
	}
	g.Observe(seen)
	// Ids made after observing, even at an earlier time, sort after it.
	for _, ms := range []int64{1_000_000_000_000, 2_000_000_000_000, 2_000_000_000_001} {
		if id := g.Next(ms); string(id[:]) <= string(seen[:]) {
			t.Errorf("id made at %d after observing %s: %s does not sort after it", ms, seen, id)
		}
	}
	// Observing an older id changes nothing.
	before := *g
	g.Observe(state.ID{0x00, 0x01})
	if g.LastMs != before.LastMs || g.Counter != before.Counter {
		t.Errorf("observing an older id moved the generator")
	}
}

func TestParseID(t *testing.T) {
	const lower = "0190a3b4-c5d6-7e8f-9a0b-1c2d3e4f5a6b"
	want, ok := state.ParseID(lower)
	if !ok || want.String() != lower {
		t.Fatalf("ParseID(%s) = %s, %v", lower, want, ok)
	}
	for _, s := range []string{strings.ToUpper(lower), "0190A3B4-c5D6-7E8f-9a0B-1C2d3E4f5A6b"} {
		if got, ok := state.ParseID(s); !ok || got != want {
			t.Errorf("ParseID(%s) = %s, %v; want %s", s, got, ok, want)
		}
	}
	if id, ok := state.ParseID("00000000-0000-0000-0000-000000000000"); !ok || !id.IsZero() {
		t.Errorf("the nil UUID: %v %v", id, ok)
	}
	for _, s := range []string{
		"", lower[:35], lower + "0", " " + lower[1:], lower[:35] + " ",
		"0190a3b4c5d67e8f9a0b1c2d3e4f5a6b",          // no dashes
		"{0190a3b4-c5d6-7e8f-9a0b-1c2d3e4f5a6}",     // braces
		"urn:uuid:0190a3b4-c5d6-7e8f-9a0b-1c2d3e4f", // urn
		"0190a3b4-c5d6-7e8f-9a0b-1c2d3e4f5a6g",      // not hex
		"0190a3b4-c5d6-7e8f-9a0b_1c2d3e4f5a6b",      // underscore for a dash
		"0190a3b-4c5d6-7e8f-9a0b-1c2d3e4f5a6b",      // dash moved
		"0190a3b4-c5d6-7e8f-9a0b--c2d3e4f5a6b",      // a fifth dash
		"00000000-0000-0000-0000--00000000000",      // a fifth dash at the last group's start (panicked)
		"-0000000-0000-0000-0000-000000000000",
		"00000000-0000-0000-0000-00000000000-",
		"00000000-0000-0000-0000-0000000000-0",
		"0000000--0000-0000-0000-000000000000",
		"00000000--000-0000-0000-000000000000",
		"+0000000-0000-0000-0000-000000000000",
		"0x000000-0000-0000-0000-000000000000",
		"0190a3b4-c5d6-7e8f-9a0b-1c2d3e4f5a6\u00e9"[:36],
	} {
		if id, ok := state.ParseID(s); ok {
			t.Errorf("ParseID(%q) = %s, want refused", s, id)
		}
	}
}

// FuzzParseID: ParseID never panics, accepts exactly the canonical form in
// either case, and what it accepts prints back as the lowercase input.
func FuzzParseID(f *testing.F) {
	for _, s := range []string{"0190a3b4-c5d6-7e8f-9a0b-1c2d3e4f5a6b", "00000000-0000-0000-0000--00000000000",
		"0190A3B4-C5D6-7E8F-9A0B-1C2D3E4F5A6B", "------------------------------------", ""} {
		f.Add(s)
	}
	canonical := regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	f.Fuzz(func(t *testing.T, s string) {
		id, ok := state.ParseID(s)
		if ok != canonical.MatchString(s) {
			t.Fatalf("ParseID(%q) ok = %v", s, ok)
		}
		if ok && id.String() != strings.ToLower(s) {
			t.Fatalf("ParseID(%q) = %s", s, id)
		}
	})
}
