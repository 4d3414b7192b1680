package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"testing"
)

func TestEncodeRoundTrip(t *testing.T) {
	writers := []struct {
		name  string
		write func(w io.Writer, body []byte) error
	}{
		{"one write", func(w io.Writer, body []byte) error {
			_, err := w.Write(body)
			return err
		}},
		{"odd pieces", func(w io.Writer, body []byte) error {
			for i, step := 0, 1; i < len(body); i, step = i+step, step*3%11+1 {
				if _, err := w.Write(body[i:min(i+step, len(body))]); err != nil {
					return err
				}
			}
			return nil
		}},
	}
	for _, cs := range []int{1, 7, 16, maxChunkSize} {
		for _, n := range []int{0, 1, cs - 1, cs, cs + 1, 3 * cs, 3*cs + 5} {
			for _, wr := range writers {
				t.Run(fmt.Sprintf("chunk=%d/len=%d/%s", cs, n, wr.name), func(t *testing.T) {
					body := randBody(n, uint64(n))
					h := header{chunkSize: uint32(cs), lsn: 42, created: 1700000000123}
					var buf bytes.Buffer
					if err := encode(&buf, h, func(w io.Writer) error { return wr.write(w, body) }); err != nil {
						t.Fatal(err)
					}
					data := buf.Bytes()
					chunks := (n + cs - 1) / cs
					if want := headerSize + chunks*frameHeadSize + n + trailerSize; len(data) != want {
						t.Errorf("file is %d bytes, want %d", len(data), want)
					}
					got, r, err := decodeBytes(data)
					if err != nil {
						t.Fatalf("read: %v", err)
					}
					if !bytes.Equal(got, body) {
						t.Errorf("body differs: got %d bytes, want %d", len(got), len(body))
					}
					if r.hdr != h {
						t.Errorf("header %+v, want %+v", r.hdr, h)
					}
				})
			}
		}
	}
}

func TestNames(t *testing.T) {
	for _, lsn := range []uint64{0, 1, 42, 1 << 40, math.MaxUint64} {
		name := fileName(lsn)
		if len(name) != lsnDigits+len(snapSuffix) {
			t.Errorf("fileName(%d) = %q: wrong length", lsn, name)
		}
		if got, ok := parseName(name); !ok || got != lsn {
			t.Errorf("parseName(%q) = %d, %v; want %d, true", name, got, ok, lsn)
		}
		if tmp := fileName(lsn) + ".123456" + tmpSuffix; !isTempName(tmp) {
			t.Errorf("isTempName(%q) = false", tmp)
		}
	}
	for _, name := range []string{
		"", ".snap", "1.snap", "000000000000000000001.snap", "18446744073709551616.snap",
		"0000000000000000000a.snap", "+0000000000000000001.snap", "00000000000000000001.snap.tmp",
		"00000000000000000001.snapx", "00000000000000000001.SNAP", "foo",
	} {
		if lsn, ok := parseName(name); ok {
			t.Errorf("parseName(%q) = %d, true; want false", name, lsn)
		}
	}
	for _, name := range []string{"x.tmp", "00000000000000000001.snap", "1.snap.2.tmp", "other.tmp"} {
		if isTempName(name) {
			t.Errorf("isTempName(%q) = true", name)
		}
	}
}

// smallFile is a multi-chunk file small enough to damage at every offset.
func smallFile(t testing.TB, lsn uint64) (data, body []byte) {
	body = randBody(100, lsn)
	return encodeBytes(t, header{chunkSize: 16, lsn: lsn, created: 1}, body), body
}

// checkRejected fails unless reading data gave an ErrCorrupt error and only
// a prefix of body (the chunks that checked out before the damage).
func checkRejected(t *testing.T, data, body []byte) {
	t.Helper()
	got, _, err := decodeBytes(data)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read error = %v, want ErrCorrupt", err)
	}
	if !bytes.HasPrefix(body, got) {
		t.Fatalf("reader handed out %d bytes that are not a prefix of the body", len(got))
	}
}

func TestReaderDetectsEveryFlip(t *testing.T) {
	data, body := smallFile(t, 7)
	for _, mask := range []byte{0x01, 0x80, 0xff} {
		for off := range data {
			t.Run(fmt.Sprintf("mask=%#x/off=%d", mask, off), func(t *testing.T) {
				bad := bytes.Clone(data)
				bad[off] ^= mask
				checkRejected(t, bad, body)
			})
		}
	}
}

func TestReaderDetectsEveryCut(t *testing.T) {
	data, body := smallFile(t, 7)
	for n := range data {
		t.Run(fmt.Sprintf("len=%d", n), func(t *testing.T) {
			checkRejected(t, data[:n], body)
		})
	}
}

func TestReaderDetectsExtraBytes(t *testing.T) {
	data, body := smallFile(t, 7)
	tests := []struct {
		name  string
		extra []byte
	}{
		{"one zero byte", []byte{0}},
		{"trailer again", data[len(data)-trailerSize:]},
		{"whole file again", data},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkRejected(t, append(bytes.Clone(data), tt.extra...), body)
		})
	}
}

// builder makes snapshot files by hand, with good checksums, to reach the
// checks that a checksum does not cover.
type builder struct {
	buf []byte
	crc uint32
}

func (b *builder) header(version, chunkSize uint32, lsn uint64) *builder {
	b.buf = append(b.buf, magic...)
	b.buf = le.AppendUint32(b.buf, version)
	b.buf = le.AppendUint32(b.buf, chunkSize)
	b.buf = le.AppendUint64(b.buf, lsn)
	b.buf = le.AppendUint64(b.buf, 1)
	b.crc = crc32.Update(0, castagnoli, b.buf)
	b.buf = le.AppendUint32(b.buf, b.crc)
	return b
}

func (b *builder) chunk(length uint32, data []byte) *builder {
	var l [4]byte
	le.PutUint32(l[:], length)
	b.crc = crc32.Update(b.crc, castagnoli, l[:])
	b.crc = crc32.Update(b.crc, castagnoli, data)
	b.buf = append(b.buf, l[:]...)
	b.buf = le.AppendUint32(b.buf, b.crc)
	b.buf = append(b.buf, data...)
	return b
}

func (b *builder) trailer(total, chunks uint64) *builder {
	start := len(b.buf)
	b.buf = le.AppendUint32(b.buf, endMarker)
	b.buf = le.AppendUint64(b.buf, total)
	b.buf = le.AppendUint64(b.buf, chunks)
	b.crc = crc32.Update(b.crc, castagnoli, b.buf[start:])
	b.buf = le.AppendUint32(b.buf, b.crc)
	return b
}

func TestReaderRejectsMalformed(t *testing.T) {
	four, two := []byte("abcd"), []byte("ef")
	tests := []struct {
		name string
		b    *builder
		ok   bool
	}{
		{"well formed", new(builder).header(formatVersion, 4, 1).chunk(4, four).chunk(2, two).trailer(6, 2), true},
		{"unknown version", new(builder).header(formatVersion+1, 4, 1).trailer(0, 0), false},
		{"chunk size 0", new(builder).header(formatVersion, 0, 1).trailer(0, 0), false},
		{"chunk size too big", new(builder).header(formatVersion, maxChunkSize+1, 1).trailer(0, 0), false},
		{"empty chunk", new(builder).header(formatVersion, 4, 1).chunk(0, nil).trailer(0, 1), false},
		{"chunk over chunk size", new(builder).header(formatVersion, 2, 1).chunk(4, four).trailer(4, 1), false},
		{"chunk after short chunk", new(builder).header(formatVersion, 4, 1).chunk(2, two).chunk(4, four).trailer(6, 2), false},
		{"trailer length short", new(builder).header(formatVersion, 4, 1).chunk(4, four).trailer(3, 1), false},
		{"trailer length long", new(builder).header(formatVersion, 4, 1).chunk(4, four).trailer(5, 1), false},
		{"trailer count wrong", new(builder).header(formatVersion, 4, 1).chunk(4, four).trailer(4, 2), false},
		{"no trailer", new(builder).header(formatVersion, 4, 1).chunk(4, four), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := decodeBytes(tt.b.buf)
			if tt.ok && err != nil {
				t.Fatalf("read: %v", err)
			}
			if !tt.ok && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("read error = %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestReaderDetectsSwappedChunks(t *testing.T) {
	data, body := smallFile(t, 7)
	// Chunks 1 and 2 are both full: swap them whole, frames included.
	frame := frameHeadSize + 16
	c1 := headerSize + frame
	bad := bytes.Clone(data)
	copy(bad[c1:], data[c1+frame:c1+2*frame])
	copy(bad[c1+frame:], data[c1:c1+frame])
	checkRejected(t, bad, body)
}

func TestReaderChecksLSN(t *testing.T) {
	data, _ := smallFile(t, 7)
	for _, tt := range []struct {
		lsn uint64
		ok  bool
	}{{7, true}, {8, false}} {
		t.Run(fmt.Sprint(tt.lsn), func(t *testing.T) {
			_, err := io.ReadAll(newReaderFor(bytes.NewReader(data), tt.lsn))
			if tt.ok != (err == nil) || (err != nil && !errors.Is(err, ErrCorrupt)) {
				t.Fatalf("read error = %v", err)
			}
		})
	}
}

type failingReader struct {
	r   io.Reader
	n   int // bytes to give before failing
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, f.err
	}
	p = p[:min(len(p), f.n)]
	n, err := f.r.Read(p)
	f.n -= n
	return n, err
}

func TestReaderPassesSourceErrors(t *testing.T) {
	data, body := smallFile(t, 7)
	errDisk := errors.New("disk on fire")
	for _, n := range []int{0, 10, headerSize + 3, len(data) - 1, len(data)} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			r := newReader(&failingReader{r: bytes.NewReader(data), n: n, err: errDisk})
			got, err := io.ReadAll(r)
			if !errors.Is(err, errDisk) || errors.Is(err, ErrCorrupt) {
				t.Fatalf("read error = %v, want the source's error only", err)
			}
			if !bytes.HasPrefix(body, got) {
				t.Fatalf("got bytes that are not a prefix of the body")
			}
			if _, err2 := r.Read(make([]byte, 1)); err2 != err {
				t.Fatalf("error not sticky: %v then %v", err, err2)
			}
		})
	}
}

func TestReaderDoesNotAllocatePerRead(t *testing.T) {
	body := randBody(2<<20, 1)
	data := encodeBytes(t, header{chunkSize: 64 << 10, lsn: 1}, body)
	r := newReader(bytes.NewReader(data))
	p := make([]byte, 4096)
	allocs := testing.AllocsPerRun(300, func() {
		if _, err := r.Read(p); err != nil {
			t.Fatal(err)
		}
	})
	// The first run, not counted, allocates the chunk buffer.
	if allocs != 0 {
		t.Errorf("%v allocations per Read, want 0", allocs)
	}
}
