package wal

import (
	"bytes"
	"testing"
)

func FuzzDecodeFrame(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4})
	f.Add(make([]byte, 5))
	f.Add(encodeFrame(nil, 1, nil))
	f.Add(encodeFrame(nil, 11, []byte("a report")))
	f.Add(encodeFrame(nil, 0, []byte("type zero")))
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Decoding arbitrary bytes never panics; what decodes re-encodes
		// to the same bytes.
		if typ, payload, err := decodeFrame(data); err == nil {
			if typ == 0 {
				t.Fatal("decoded type 0")
			}
			if again := encodeFrame(nil, typ, payload); !bytes.Equal(again, data) {
				t.Fatalf("decode then encode: %x, want %x", again, data)
			}
		}
		// Encoding then decoding round trips (data[0] is the type).
		if len(data) == 0 || data[0] == 0 {
			return
		}
		frame := encodeFrame(nil, data[0], data[1:])
		typ, payload, err := decodeFrame(frame)
		if err != nil || typ != data[0] || !bytes.Equal(payload, data[1:]) {
			t.Fatalf("round trip of type %d, %d bytes: (%d, %d bytes, %v)", data[0], len(data)-1, typ, len(payload), err)
		}
	})
}

func FuzzScanSegment(f *testing.F) {
	a := tEntryBytes(1, []byte("first"))
	b := tEntryBytes(2, bytes.Repeat([]byte("b"), 200))
	c := tEntryBytes(3, nil)
	clean := cat(a, b, c)
	f.Add([]byte{})
	f.Add(clean)
	f.Add(cat(clean, make([]byte, 64)))
	f.Add(cat(a, b[:100]))
	f.Add(cat(a, []byte{0x80}))
	f.Add(cat(a, bytes.Repeat([]byte{0xff}, 12)))
	f.Add(cat(a, []byte{7, 1, 2, 3}, c))
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := scanSegment(data)
		if r.valid < 0 || r.valid > len(data) {
			t.Fatalf("valid prefix %d of %d bytes", r.valid, len(data))
		}
		if r.damage == nil && (r.valid != len(data) || r.resync != -1) {
			t.Fatalf("clean scan %+v of %d bytes", r, len(data))
		}
		if r.damage != nil && r.valid == len(data) {
			t.Fatalf("damage %v at the end of %d bytes", r.damage, len(data))
		}
		if r.resync >= 0 {
			if r.resync <= r.valid || r.resync >= len(data) {
				t.Fatalf("resync at %d, damage at %d, %d bytes", r.resync, r.valid, len(data))
			}
			if _, _, _, err := entryAt(data, r.resync); err != nil {
				t.Fatalf("resync offset %d does not hold a valid entry: %v", r.resync, err)
			}
		}
		// The valid prefix holds exactly r.records entries.
		n := 0
		for off := 0; off < r.valid; n++ {
			_, _, size, err := entryAt(data[:r.valid], off)
			if err != nil {
				t.Fatalf("valid prefix does not re-scan at %d: %v", off, err)
			}
			off += size
		}
		if n != r.records {
			t.Fatalf("valid prefix holds %d entries, scan said %d", n, r.records)
		}
	})
}
