// Package password hashes and checks dashboard passwords with argon2id,
// bounding how many hashes run at once so that a flood of logins cannot
// take the CPU from report ingest.
package password

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Params are argon2id's cost parameters.
type Params struct {
	Time    uint32 // passes
	Memory  uint32 // KiB
	Threads uint8
}

// Default follows OWASP's argon2id recommendation (19 MiB, 2 passes, 1
// thread); bench/RESULTS.md has what one hash costs on our machine.
var Default = Params{Time: 2, Memory: 19 * 1024, Threads: 1}

const (
	saltLen = 16
	keyLen  = 32
	// MinLength and MaxLength bound a password's length in characters.
	MinLength = 10
	MaxLength = 256
)

// Errors of Hasher.
var (
	// ErrBusy is returned when every hashing slot is taken and the queue
	// is full; the caller should answer "try again" rather than wait.
	ErrBusy = errors.New("password: too many logins at once")
	// ErrMalformed is returned for an encoded hash this package did not
	// write.
	ErrMalformed = errors.New("password: malformed hash")
)

// Validate returns the message for a password that is too short or too
// long, or "" for a good one.
func Validate(pw string) string {
	n := utf8.RuneCountInString(pw)
	switch {
	case n < MinLength:
		return fmt.Sprintf("password must be at least %d characters", MinLength)
	case n > MaxLength:
		return fmt.Sprintf("password must be at most %d characters", MaxLength)
	}
	return ""
}

// Hasher runs argon2id with at most Slots hashes at once and at most Queue
// callers waiting for a slot.
type Hasher struct {
	params Params
	slots  chan struct{}
	queue  chan struct{}
	runs   atomic.Uint64 // argon2id computations started
}

// Runs returns how many argon2id computations (hashes and checks) the
// Hasher has started.
func (h *Hasher) Runs() uint64 { return h.runs.Load() }

// NewHasher returns a Hasher with the given cost, slots (at least 1) and
// queue length.
func NewHasher(p Params, slots, queue int) *Hasher {
	return &Hasher{params: p, slots: make(chan struct{}, max(slots, 1)), queue: make(chan struct{}, max(slots, 1)+max(queue, 0))}
}

// acquire takes a slot, waiting in the queue; it returns ErrBusy when the
// queue is full and ctx's error when ctx ends first.
func (h *Hasher) acquire(ctx context.Context) error {
	select {
	case h.queue <- struct{}{}:
	default:
		return ErrBusy
	}
	select {
	case h.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		<-h.queue
		return ctx.Err()
	}
}

func (h *Hasher) release() {
	<-h.slots
	<-h.queue
}

// Hash returns the encoded argon2id hash of pw with a fresh salt
// ("$argon2id$v=19$m=...,t=...,p=...$salt$key", the reference encoding).
func (h *Hasher) Hash(ctx context.Context, pw string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password salt: %w", err)
	}
	if err := h.acquire(ctx); err != nil {
		return "", err
	}
	defer h.release()
	h.runs.Add(1)
	p := h.params
	key := argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, keyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// Check reports whether pw matches the encoded hash, with the hash's own
// parameters. It returns ErrMalformed for a hash it cannot read and ErrBusy
// or ctx's error when no slot came free.
func (h *Hasher) Check(ctx context.Context, encoded, pw string) (bool, error) {
	p, salt, key, err := decode(encoded)
	if err != nil {
		return false, err
	}
	if err := h.acquire(ctx); err != nil {
		return false, err
	}
	defer h.release()
	h.runs.Add(1)
	got := argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, uint32(len(key)))
	return subtle.ConstantTimeCompare(got, key) == 1, nil
}

// CheckDummy spends what a Check costs, for a login whose user does not
// exist, so that its answer takes as long as a wrong password's.
func (h *Hasher) CheckDummy(ctx context.Context, pw string) error {
	_, err := h.Check(ctx, dummy(), pw)
	return err
}

// dummy returns a hash of a password nobody has, with the default
// parameters, made on first use (not at start-up of every program that
// imports this package).
var dummy = sync.OnceValue(func() string {
	s, err := NewHasher(Default, 1, 0).Hash(context.Background(), "not a password anyone has")
	if err != nil {
		panic(err)
	}
	return s
})

func decode(s string) (Params, []byte, []byte, error) {
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return Params{}, nil, nil, ErrMalformed
	}
	var v int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return Params{}, nil, nil, ErrMalformed
	}
	var p Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return Params{}, nil, nil, ErrMalformed
	}
	// Bounds against a hash that would cost too much or nothing at all.
	if p.Time < 1 || p.Time > 10 || p.Memory < 8*uint32(p.Threads) || p.Memory > 256*1024 || p.Threads < 1 {
		return Params{}, nil, nil, ErrMalformed
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	key, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(salt) < 8 || len(key) < 16 || len(key) > 64 {
		return Params{}, nil, nil, ErrMalformed
	}
	return p, salt, key, nil
}
