package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// tEntryBytes returns the tidwall entry (uvarint length + frame) for a record.
func tEntryBytes(typ byte, payload []byte) []byte {
	frame := encodeFrame(nil, typ, payload)
	return append(binary.AppendUvarint(nil, uint64(len(frame))), frame...)
}

func TestDecodeFrame(t *testing.T) {
	good := encodeFrame(nil, 7, []byte("hello"))
	flipped := bytes.Clone(good)
	flipped[6] ^= 0x01
	badCRC := bytes.Clone(good)
	badCRC[0] ^= 0xff
	zeroType := encodeFrame(nil, 0, []byte("x"))
	tests := []struct {
		name    string
		frame   []byte
		typ     byte
		payload []byte
		err     error
	}{
		{"good", good, 7, []byte("hello"), nil},
		{"empty payload", encodeFrame(nil, 255, nil), 255, []byte{}, nil},
		{"nil", nil, 0, nil, errShortFrame},
		{"four bytes", good[:4], 0, nil, errShortFrame},
		{"payload flipped", flipped, 0, nil, errCRC},
		{"crc flipped", badCRC, 0, nil, errCRC},
		{"type zero", zeroType, 0, nil, errZeroType},
		{"zeros", make([]byte, 32), 0, nil, errZeroType},
		{"truncated", good[:len(good)-1], 0, nil, errCRC},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ, payload, err := decodeFrame(tt.frame)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if typ != tt.typ || !bytes.Equal(payload, tt.payload) {
				t.Fatalf("got (%d, %q), want (%d, %q)", typ, payload, tt.typ, tt.payload)
			}
		})
	}
}

func TestAppendFrameMatchesEncodeFrame(t *testing.T) {
	rec := &Raw{Typ: 3, Payload: []byte("payload")}
	prefix := []byte("abc")
	got := appendFrame(bytes.Clone(prefix), rec)
	want := encodeFrame(bytes.Clone(prefix), 3, []byte("payload"))
	if !bytes.Equal(got, want) {
		t.Fatalf("appendFrame = %x, want %x", got, want)
	}
}

func TestUvarintLen(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 16383, 16384, 1 << 21, 1<<28 + 5, 1 << 40} {
		if got, want := uvarintLen(n), len(binary.AppendUvarint(nil, uint64(n))); got != want {
			t.Errorf("uvarintLen(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestScanSegment(t *testing.T) {
	a := tEntryBytes(1, []byte("first"))
	b := tEntryBytes(2, bytes.Repeat([]byte("b"), 200)) // two-byte length
	c := tEntryBytes(3, []byte("third"))
	clean := cat(a, b, c)
	mid := bytes.Clone(clean)
	mid[len(a)+10] ^= 0x40 // inside b's payload
	tests := []struct {
		name    string
		data    []byte
		valid   int
		records int
		damage  error
		resync  int
	}{
		{"empty", nil, 0, 0, nil, -1},
		{"clean", clean, len(clean), 3, nil, -1},
		{"zeros appended", cat(clean, make([]byte, 4096)), len(clean), 3, errShortFrame, -1},
		{"half an entry", cat(a, b[:50]), len(a), 1, errTorn, -1},
		{"half a length", cat(a, b[:1]), len(a), 1, errTornLength, -1},
		{"length overflow", cat(a, bytes.Repeat([]byte{0xff}, 11)), len(a), 1, errBadLength, -1},
		{"crc damage in the middle", mid, len(a), 1, errCRC, len(a) + len(b)},
		{"zero entry then valid", cat(a, []byte{0}, c), len(a), 1, errShortFrame, len(a) + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := scanSegment(tt.data)
			if r.valid != tt.valid || r.records != tt.records || !errors.Is(r.damage, tt.damage) || r.resync != tt.resync {
				t.Fatalf("scanSegment = %+v, want valid %d records %d damage %v resync %d",
					r, tt.valid, tt.records, tt.damage, tt.resync)
			}
		})
	}
}

// cat concatenates byte slices into a new one.
func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
