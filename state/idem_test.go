package state

import (
	"strconv"
	"strings"
	"testing"
)

// TestIdemDigestOf: a key's digest depends on its job and every byte of
// the key, long keys included.
func TestIdemDigestOf(t *testing.T) {
	j1, j2 := ID{1}, ID{2}
	long := strings.Repeat("k", 1000)
	seen := map[IdemDigest]string{}
	for _, c := range []struct {
		name string
		job  ID
		key  string
	}{
		{"short", j1, "run-1"}, {"short, other job", j2, "run-1"}, {"other key", j1, "run-2"},
		{"240 bytes", j1, long[:240]}, {"241 bytes", j1, long[:241]}, {"long", j1, long}, {"long, last byte", j1, long[:999] + "x"},
	} {
		d := IdemDigestOf(c.job, c.key)
		if d != IdemDigestOf(c.job, c.key) {
			t.Fatalf("%s: two digests of one key differ", c.name)
		}
		if other, ok := seen[d]; ok {
			t.Fatalf("%s: same digest as %s", c.name, other)
		}
		seen[d] = c.name
	}
}

// TestIdemTable: keys are found until pruned at 30 days; a pending key
// outlives its 30 days until its report is durable; a key put again gets a
// fresh entry, the replaced one kept aside while pending; a table pruned
// to a quarter of its slots moves to one of its size, and one pruned empty
// lets everything go.
func TestIdemTable(t *testing.T) {
	var tb IdemTable
	d := func(i int) IdemDigest { return IdemDigestOf(ID{9}, "key-"+strconv.Itoa(i)) }
	const n = 10000
	for i := range n {
		e := tb.Put(d(i), int64(i))
		if e.At != int64(i) || e.Pending.Load() {
			t.Fatalf("put %d: entry %d, pending %v", i, e.At, e.Pending.Load())
		}
	}
	if tb.Len() != n || tb.slots() != n {
		t.Fatalf("%d keys in %d slots, want %d", tb.Len(), tb.slots(), n)
	}
	for i := range n {
		if e := tb.Get(d(i)); e == nil || e.At != int64(i) {
			t.Fatalf("get %d: %v", i, e)
		}
	}
	if tb.Get(d(n)) != nil {
		t.Fatal("a key never put is found")
	}

	// Key 1 is on its way to the log and is put again (a retry after 60
	// s): it gets a fresh entry, the old one kept aside while pending.
	old := tb.Get(d(1))
	old.Pending.Store(true)
	again := tb.Put(d(1), n+1)
	if again == old || tb.Get(d(1)) != again || again.At != n+1 || again.Pending.Load() || len(tb.orphans) != 1 {
		t.Fatalf("put again: entry %+v, the table's %+v, %d orphans", again, tb.Get(d(1)), len(tb.orphans))
	}
	tb.Get(d(2)).Pending.Store(true)

	// 30 days after key 7,999: keys 0 and 3–7,999 go; key 1 (put again)
	// and key 2 (pending) stay. A pending entry keeps the table from
	// moving, and a new key takes a freed slot.
	now := IdemKeepMs + 7999
	tb.Prune(now)
	for i, want := range map[int]bool{0: false, 1: true, 2: true, 3: false, 7999: false, 8000: true, n - 1: true} {
		if got := tb.Get(d(i)) != nil; got != want {
			t.Fatalf("after the prune, key %d found %v, want %v", i, got, want)
		}
	}
	tb.Put(d(n+5), now)
	if tb.Len() != 2003 || tb.slots() != n+1 {
		t.Fatalf("%d keys in %d slots, want 2003 in %d", tb.Len(), tb.slots(), n+1)
	}

	// Once nothing is pending, the next prune drops key 2, frees the
	// orphan and moves the keys to a table of their size.
	old.Pending.Store(false)
	tb.Get(d(2)).Pending.Store(false)
	tb.Prune(now)
	if tb.Len() != 2002 || tb.slots() != 2002 || len(tb.orphans) != 0 || len(tb.free) != 0 {
		t.Fatalf("%d keys in %d slots, %d orphans, %d free; want 2002 in 2002, none", tb.Len(), tb.slots(), len(tb.orphans), len(tb.free))
	}
	for i := 8000; i < n; i++ {
		if e := tb.Get(d(i)); e == nil || e.At != int64(i) {
			t.Fatalf("after the move, key %d: %+v", i, e)
		}
	}
	if e := tb.Get(d(1)); e == nil || e.At != n+1 {
		t.Fatalf("after the move, key 1: %+v", e)
	}

	// Pruned empty: nothing is kept.
	tb.Prune(now + IdemKeepMs)
	if tb.index != nil || tb.chunks != nil || tb.free != nil {
		t.Fatalf("an empty table keeps %d chunks, %d free", len(tb.chunks), len(tb.free))
	}
}

// BenchmarkIdemDigestOf: the digest of a 36-character key (a UUID, as
// agents send), computed once per report with a key.
func BenchmarkIdemDigestOf(b *testing.B) {
	b.ReportAllocs()
	var d IdemDigest
	for i := range b.N {
		d = IdemDigestOf(ID{byte(i)}, "0b9f3c1e-7a4d-4e2b-9c8f-1d2e3f4a5b6c")
	}
	_ = d
}
