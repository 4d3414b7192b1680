package state

import (
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
)

// ID identifies a workspace, client, device, job, result, alert, key or
// activity entry. It is shown as a UUID (version 7 layout: the first 48 bits
// are the creation time in milliseconds), so ids made by one workspace sort
// in the order they were made.
type ID [16]byte

// String returns the id in the canonical lowercase UUID form.
func (id ID) String() string {
	var b [36]byte
	id.appendTo(b[:0])
	return string(b[:])
}

// AppendTo appends the canonical UUID form of id to dst.
func (id ID) AppendTo(dst []byte) []byte { return id.appendTo(dst) }

func (id ID) appendTo(dst []byte) []byte {
	var b [36]byte
	hex.Encode(b[0:8], id[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], id[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], id[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], id[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], id[10:16])
	return append(dst, b[:]...)
}

// IsZero reports whether id is the zero id (no id).
func (id ID) IsZero() bool { return id == ID{} }

// ParseID reads a canonical UUID (either case). It returns false for anything
// else, which callers treat as an id that does not exist.
func ParseID(s string) (ID, bool) {
	var id ID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return id, false
	}
	// Hex pairs sit at fixed places between the four dashes; a dash
	// anywhere else is not a hex digit. (Skipping any dash, as this did
	// before, let a fifth dash shift the pairs so that the last one read
	// past the end: "00000000-0000-0000-0000--00000000000" panicked.)
	j := 0
	for i := 0; i < 36; i += 2 {
		switch i {
		case 8, 13, 18, 23:
			i++
		}
		hi, ok1 := unhex(s[i])
		lo, ok2 := unhex(s[i+1])
		if !ok1 || !ok2 {
			return ID{}, false
		}
		id[j] = hi<<4 | lo
		j++
	}
	return id, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// idGen makes ids that increase strictly within one generator: the
// millisecond time from the engine's clock, then a 12-bit counter for ids made
// in the same (or an earlier) millisecond, then random bits. One generator
// lives in each workspace actor, so it needs no lock.
type IDGen struct {
	LastMs  int64
	Counter uint16
	rng     *rand.ChaCha8
}

func NewIDGen() *IDGen {
	var seed [32]byte
	if _, err := crand.Read(seed[:]); err != nil {
		panic("engine: no randomness for ids: " + err.Error())
	}
	return &IDGen{rng: rand.NewChaCha8(seed)}
}

// next returns a new id for a thing made at nowMs.
func (g *IDGen) Next(nowMs int64) ID {
	if nowMs > g.LastMs {
		g.LastMs = nowMs
		g.Counter = 0
	} else {
		g.Counter++
		if g.Counter > 0x0fff {
			g.LastMs++
			g.Counter = 0
		}
	}
	var id ID
	ms := uint64(g.LastMs)
	id[0] = byte(ms >> 40)
	id[1] = byte(ms >> 32)
	id[2] = byte(ms >> 24)
	id[3] = byte(ms >> 16)
	id[4] = byte(ms >> 8)
	id[5] = byte(ms)
	id[6] = 0x70 | byte(g.Counter>>8)
	id[7] = byte(g.Counter)
	binary.LittleEndian.PutUint64(id[8:], g.rng.Uint64())
	id[8] = 0x80 | id[8]&0x3f
	return id
}

// observe moves the generator past an id read from the log or a snapshot, so
// ids made after a restart still sort after the ones made before it.
func (g *IDGen) Observe(id ID) {
	ms := int64(id[0])<<40 | int64(id[1])<<32 | int64(id[2])<<24 | int64(id[3])<<16 | int64(id[4])<<8 | int64(id[5])
	c := uint16(id[6]&0x0f)<<8 | uint16(id[7])
	if ms > g.LastMs || (ms == g.LastMs && c > g.Counter) {
		g.LastMs, g.Counter = ms, c
	}
}

// randomBytes fills b from the operating system's CSPRNG (for key secrets and
// ingest tokens).
func RandomBytes(b []byte) {
	if _, err := crand.Read(b); err != nil {
		panic("engine: no randomness: " + err.Error())
	}
}
