package snapshot

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzReader feeds arbitrary file bytes to the reader. It must never panic,
// never return more bytes than the file holds, fail only with ErrCorrupt
// (the source never fails), and accept a body only from the one valid
// encoding of it.
func FuzzReader(f *testing.F) {
	for _, s := range []struct {
		chunkSize uint32
		body      []byte
	}{
		{1, nil},
		{1, []byte("a")},
		{4, []byte("abcdefgh")},
		{4, []byte("abcdefghij")},
		{16, randBody(100, 1)},
		{maxChunkSize, []byte("engine state")},
	} {
		data := encodeBytes(f, header{chunkSize: s.chunkSize, lsn: 42, created: 1700000000000}, s.body)
		f.Add(data)
		f.Add(data[:len(data)-1])
		f.Add(append(bytes.Clone(data), 0))
		f.Add(flipAt(len(data) / 2)(data))
	}
	f.Add([]byte{})
	f.Add([]byte(magic))

	f.Fuzz(func(t *testing.T, data []byte) {
		body, r, err := decodeBytes(data)
		if len(body) > len(data) {
			t.Fatalf("got %d bytes from a %d byte file", len(body), len(data))
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		if len(body) > len(data)-headerSize-trailerSize {
			t.Fatalf("accepted %d bytes from a %d byte file", len(body), len(data))
		}
		if again := encodeBytes(t, r.hdr, body); !bytes.Equal(again, data) {
			t.Fatalf("accepted a file that is not the encoding of its body")
		}
	})
}
