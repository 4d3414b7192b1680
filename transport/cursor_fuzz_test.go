package transport

// Fuzz tests of the pagination cursors (decisions.md 5): decode takes
// nothing but what encode made with the same key, gives back exactly what
// was encoded, and the text shows none of it (the position's name
// included).

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"strings"
	"testing"

	"backupmon/engine"
)

const cursorAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

var (
	fuzzCursorKey  = []byte("fuzz cursor key, 32 bytes long!!")
	otherCursorKey = []byte("another key of the same length!!")
)

// fuzzCursor builds a cursor from fuzzed parts; id also gives the
// workspace (its bytes reversed).
func fuzzCursor(ep uint8, filters uint64, hasWindow bool, from, to, at int64, id []byte, name string) cursor {
	c := cursor{endpoint: engine.Endpoint(ep), hasWindow: hasWindow, from: from, to: to}
	for i := range min(len(id), len(c.workspace)) {
		c.workspace[len(c.workspace)-1-i] = id[i]
	}
	binary.BigEndian.PutUint64(c.filters[:], filters)
	c.pos.Time = at
	copy(c.pos.ID[:], id)
	c.pos.Name = name
	return c
}

// alphabetIndex returns the base64url value of ch, or -1.
func alphabetIndex(ch byte) int { return strings.IndexByte(cursorAlphabet, ch) }

// FuzzCursorDecode: decode never panics; whatever it accepts re-encodes to
// the same text (so it was encode's output) and is refused under another
// key; every cursor round-trips, including long names of any bytes; a
// cursor made with another key is refused; and a valid cursor with any one
// character changed is refused (every single-bit change of a character's
// 6-bit value, and one fuzzed change of any byte; TestCursorEveryCharacter-
// ChangeIsRefused tries every other character at every position).
func FuzzCursorDecode(f *testing.F) {
	codec := newCursorCodec(fuzzCursorKey)
	for i, c := range []cursor{
		{},
		{endpoint: engine.EndpointJobs, workspace: engine.ID{0xee, 1}, pos: engine.Position{Name: "nightly backup 7", ID: engine.ID{1, 2, 3}}},
		{endpoint: engine.EndpointReports, hasWindow: true, from: 1700000000000, to: 1708035200000, pos: engine.Position{Time: 1705000000000, ID: engine.ID{9}}},
		{endpoint: engine.EndpointAlerts, filters: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}, from: -1, to: -1 << 63, pos: engine.Position{Time: 1<<63 - 1, Name: strings.Repeat("é", 400)}},
		{endpoint: 255, pos: engine.Position{Name: strings.Repeat("\xff\x00", 700)}},
	} {
		s := codec.encode(c)
		f.Add(s, uint8(c.endpoint), binary.BigEndian.Uint64(c.filters[:]), c.hasWindow, c.from, c.to, c.pos.Time, c.pos.ID[:], c.pos.Name, uint16(i*7), byte('A'+i))
	}
	f.Add("", uint8(0), uint64(0), false, int64(0), int64(0), int64(0), []byte(nil), "", uint16(0), byte(0))
	f.Add("AQUAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", uint8(1), uint64(1), true, int64(1), int64(2), int64(3), []byte{1}, "x", uint16(5), byte('='))
	other := newCursorCodec(otherCursorKey)
	f.Fuzz(func(t *testing.T, s string, ep uint8, filters uint64, hasWindow bool, from, to, at int64, id []byte, name string, where uint16, with byte) {
		// Arbitrary text.
		if cur, err := codec.decode(s); err == nil {
			if again := codec.encode(cur); again != s {
				t.Fatalf("decode accepted %q, which encodes as %q", s, again)
			}
			if _, err := other.decode(s); err == nil {
				t.Fatalf("%q is accepted under two keys", s)
			}
		}

		// Round trip.
		c := fuzzCursor(ep, filters, hasWindow, from, to, at, id, name)
		enc := codec.encode(c)
		if strings.Trim(enc, cursorAlphabet) != "" {
			t.Fatalf("cursor %q is not URL-safe base64 without padding", enc)
		}
		got, err := codec.decode(enc)
		if err != nil {
			t.Fatalf("encode(%+v) = %q: decode refuses it: %v", c, enc, err)
		}
		if got != c {
			t.Fatalf("encode(%+v) reads back as %+v", c, got)
		}

		// Opaque: the decoded bytes show neither the name (of eight bytes
		// or more: a shorter one may match by chance) nor the workspace.
		raw, _ := base64.RawURLEncoding.DecodeString(enc)
		if len(name) >= 8 && bytes.Contains(raw, []byte(name)) {
			t.Fatalf("cursor %q shows the name %q", enc, name)
		}
		if ws := c.workspace; ws != (engine.ID{}) && bytes.Contains(raw, ws[:]) {
			t.Fatalf("cursor %q shows the workspace %x", enc, ws)
		}

		// Another key.
		if _, err := codec.decode(other.encode(c)); err == nil {
			t.Fatalf("a cursor signed with another key is accepted: %+v", c)
		}

		// Single-character changes: at every position of a short cursor;
		// of a long one (a long name), at the first and last 128 and every
		// 61st between, since each decode of it hashes all of it.
		b := []byte(enc)
		for i := range b {
			if len(b) > 256 && i >= 128 && i < len(b)-128 && i%61 != 0 {
				continue
			}
			v := alphabetIndex(b[i])
			for bit := 0; bit < 6; bit++ {
				b[i] = cursorAlphabet[v^1<<bit]
				if cur, err := codec.decode(string(b)); err == nil {
					t.Fatalf("cursor %q with character %d changed to %q is accepted as %+v", enc, i, b[i], cur)
				}
			}
			b[i] = enc[i]
		}
		if i := int(where) % len(b); with != b[i] {
			b[i] = with
			if cur, err := codec.decode(string(b)); err == nil {
				t.Fatalf("cursor %q with character %d changed to %q is accepted as %+v", enc, i, with, cur)
			}
		}
	})
}

// TestCursorEveryCharacterChangeIsRefused replaces each character of a few
// cursors by every other character of the alphabet.
func TestCursorEveryCharacterChangeIsRefused(t *testing.T) {
	codec := newCursorCodec(fuzzCursorKey)
	for n := range 3 { // three name lengths: the text's last character then carries 0, 2 or 4 spare bits
		c := cursor{endpoint: engine.EndpointJobs, filters: [8]byte{7}, pos: engine.Position{Name: strings.Repeat("n", n), ID: engine.ID{1}}}
		enc := codec.encode(c)
		b := []byte(enc)
		for i := range b {
			for j := range len(cursorAlphabet) {
				if cursorAlphabet[j] == enc[i] {
					continue
				}
				b[i] = cursorAlphabet[j]
				if _, err := codec.decode(string(b)); err == nil {
					t.Errorf("name of %d bytes: %q with character %d changed to %q is accepted", n, enc, i, b[i])
				}
			}
			b[i] = enc[i]
		}
	}
}
