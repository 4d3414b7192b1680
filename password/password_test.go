package password

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

var cheap = Params{Time: 1, Memory: 64, Threads: 1}

func TestHashCheck(t *testing.T) {
	h := NewHasher(cheap, 1, 4)
	ctx := context.Background()
	enc, err := h.Hash(ctx, "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("encoding %q", enc)
	}
	again, _ := h.Hash(ctx, "correct horse battery")
	if again == enc {
		t.Fatal("two hashes of one password are equal: no salt")
	}
	for _, tc := range []struct {
		pw   string
		want bool
	}{{"correct horse battery", true}, {"correct horse batterY", false}, {"", false}} {
		ok, err := h.Check(ctx, enc, tc.pw)
		if err != nil || ok != tc.want {
			t.Errorf("Check(%q) = %v, %v; want %v", tc.pw, ok, err, tc.want)
		}
	}
}

func TestMalformed(t *testing.T) {
	h := NewHasher(cheap, 1, 0)
	for _, s := range []string{"", "plain", "$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=9999999,t=1,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=64,t=99,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=64,t=1,p=1$!!$a2V5a2V5a2V5a2V5a2V5a2V5"} {
		if _, err := h.Check(context.Background(), s, "x"); !errors.Is(err, ErrMalformed) {
			t.Errorf("Check(%q): %v, want ErrMalformed", s, err)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct{ pw, want string }{
		{"short", "password must be at least 10 characters"},
		{strings.Repeat("é", 10), ""},
		{strings.Repeat("a", 257), "password must be at most 256 characters"},
	} {
		if got := Validate(tc.pw); got != tc.want {
			t.Errorf("Validate(%d chars) = %q, want %q", len(tc.pw), got, tc.want)
		}
	}
}

// TestBound: with one slot and a queue of one, a third caller at once gets
// ErrBusy, and no more than one hash ever runs at a time.
func TestBound(t *testing.T) {
	h := NewHasher(Params{Time: 1, Memory: 4 * 1024, Threads: 1}, 1, 1)
	hold := make(chan struct{})
	ctx := context.Background()
	if err := h.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	var second error
	go func() {
		defer wg.Done()
		_, second = h.Hash(ctx, "waits for the slot")
		close(hold)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for len(h.queue) < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if _, err := h.Hash(ctx, "third"); !errors.Is(err, ErrBusy) {
		t.Fatalf("third caller: %v, want ErrBusy", err)
	}
	select {
	case <-hold:
		t.Fatal("the queued hash ran while the slot was held")
	default:
	}
	h.release()
	wg.Wait()
	if second != nil {
		t.Fatalf("queued caller: %v", second)
	}
	cctx, cancel := context.WithCancel(ctx)
	_ = h.acquire(ctx)
	cancel()
	if _, err := h.Hash(cctx, "gives up"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller: %v", err)
	}
	h.release()
	if len(h.queue) != 0 || len(h.slots) != 0 {
		t.Fatalf("slots %d queue %d after all returned", len(h.slots), len(h.queue))
	}
}

// BenchmarkHashDefault measures one argon2id hash at the default cost: the
// figure the slot count is chosen from (bench/RESULTS.md).
func BenchmarkHashDefault(b *testing.B) {
	h := NewHasher(Default, 1, 0)
	for b.Loop() {
		if _, err := h.Hash(context.Background(), "correct horse battery"); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzDecode: an encoded hash read back from anywhere never panics, and
// one that decodes has parameters within the bounds Check accepts.
func FuzzDecode(f *testing.F) {
	h := NewHasher(cheap, 1, 0)
	enc, _ := h.Hash(context.Background(), "seed password")
	f.Add(enc)
	f.Add("$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5")
	f.Add("$argon2id$v=19$m=1,t=1,p=0$$")
	f.Fuzz(func(t *testing.T, s string) {
		p, salt, key, err := decode(s)
		if err != nil {
			return
		}
		if p.Time < 1 || p.Time > 10 || p.Threads < 1 || p.Memory > 256*1024 || len(salt) < 8 || len(key) < 16 {
			t.Fatalf("decode(%q) accepted %+v salt %d key %d", s, p, len(salt), len(key))
		}
	})
}
