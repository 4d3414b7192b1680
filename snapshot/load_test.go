package snapshot

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadNoSnapshot(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{"missing dir", func(t *testing.T, dir string) {
			if err := os.Remove(dir); err != nil {
				t.Fatal(err)
			}
		}},
		{"empty dir", func(*testing.T, string) {}},
		{"only temp and junk", func(t *testing.T, dir string) { fillDir(t, dir, nil, 3) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(t, dir)
			lsn, calls, err := loadAll(quiet, dir)
			if !errors.Is(err, ErrNoSnapshot) || lsn != 0 || len(calls) != 0 {
				t.Fatalf("Load = %d, %v with %d calls; want ErrNoSnapshot, no call", lsn, err, len(calls))
			}
		})
	}
}

func TestLoadIgnoresTempAndJunk(t *testing.T) {
	dir := t.TempDir()
	writeSnap(t, dir, 10, []byte("ten"))
	// A leftover temp file for a newer LSN, and junk.
	writeFile(t, dir, fileName(20)+".999"+tmpSuffix, []byte("half a snapshot"))
	writeFile(t, dir, "00000000000000000030.snapshot", []byte("junk"))
	writeFile(t, dir, "30.snap", []byte("junk"))
	lsn, calls, err := loadAll(quiet, dir)
	if err != nil || lsn != 10 || len(calls) != 1 || string(calls[0].body) != "ten" {
		t.Fatalf("Load = %d, %v, calls %+v", lsn, err, calls)
	}
}

// damage is a way to spoil a snapshot file's bytes.
type damage struct {
	name  string
	spoil func(data []byte) []byte
}

func flipAt(off int) func([]byte) []byte {
	return func(data []byte) []byte {
		data = bytes.Clone(data)
		if off < 0 {
			off += len(data)
		}
		data[off] ^= 0x10
		return data
	}
}

func cutAt(n int) func([]byte) []byte {
	return func(data []byte) []byte {
		if n < 0 {
			n += len(data)
		}
		return data[:n]
	}
}

func appendBytes(extra []byte) func([]byte) []byte {
	return func(data []byte) []byte { return append(bytes.Clone(data), extra...) }
}

// chunkAt returns the offset of chunk i in a file of default-size chunks.
func chunkAt(i int) int { return headerSize + i*(frameHeadSize+defaultChunkSize) }

// largeDamages lists the damages tried on a file of size bytes holding
// several chunks of the default size.
func largeDamages(size int) []damage {
	var ds []damage
	for off := 0; off < headerSize; off++ {
		ds = append(ds, damage{fmt.Sprintf("header flip %d", off), flipAt(off)})
	}
	for _, off := range []int{
		chunkAt(0), chunkAt(0) + 3, chunkAt(0) + 4, chunkAt(0) + frameHeadSize,
		chunkAt(1) + frameHeadSize + defaultChunkSize/2, chunkAt(1) - 1,
		chunkAt(2) + 1, size - trailerSize - 1,
	} {
		ds = append(ds, damage{fmt.Sprintf("chunk flip %d", off), flipAt(off)})
	}
	for off := size - trailerSize; off < size; off++ {
		ds = append(ds, damage{fmt.Sprintf("trailer flip %d", off), flipAt(off)})
	}
	cuts := []int{0, 1, headerSize - 1, headerSize, headerSize + 1, size - trailerSize,
		size - trailerSize + 1, size - 1}
	for i := 0; chunkAt(i) < size-trailerSize; i++ {
		cuts = append(cuts, chunkAt(i)-1, chunkAt(i), chunkAt(i)+frameHeadSize, chunkAt(i)+frameHeadSize+1)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 30 {
		cuts = append(cuts, rng.IntN(size))
	}
	for _, n := range cuts {
		ds = append(ds, damage{fmt.Sprintf("cut at %d", n), cutAt(n)})
	}
	ds = append(ds,
		damage{"one byte appended", appendBytes([]byte{0})},
		damage{"a chunk's worth appended", appendBytes(make([]byte, frameHeadSize+100))},
	)
	return ds
}

func TestLoadFallsBackFromCorruptNewest(t *testing.T) {
	tmpl := t.TempDir()
	oldBody, newBody := randBody(1000, 1), randBody(2*defaultChunkSize+5, 2)
	oldFile := writeSnap(t, tmpl, 100, oldBody)
	newFile := writeSnap(t, tmpl, 200, newBody)
	// A second copy of the trailer looks like a valid end: still refused.
	ds := append(largeDamages(len(newFile)),
		damage{"trailer appended", appendBytes(newFile[len(newFile)-trailerSize:])})

	for _, d := range ds {
		t.Run(d.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, fileName(100), oldFile)
			writeFile(t, dir, fileName(200), d.spoil(newFile))
			o, logs := capture()
			lsn, calls, err := loadAll(o, dir)
			if err != nil || lsn != 100 {
				t.Fatalf("Load = %d, %v; want 100, nil", lsn, err)
			}
			checkFellBack(t, calls, newBody, oldBody)
			if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, fileName(200)) {
				t.Errorf("no warning naming the corrupt file: %s", l)
			}
		})
	}
}

// checkFellBack checks that fn was called for the corrupt snapshot 200, got
// an ErrCorrupt error and no byte that is not the body's, then for 100 with
// its body.
func checkFellBack(t *testing.T, calls []call, newBody, oldBody []byte) {
	t.Helper()
	if len(calls) != 2 {
		t.Fatalf("fn called %d times, want 2", len(calls))
	}
	bad, good := calls[0], calls[1]
	if bad.lsn != 200 || !errors.Is(bad.err, ErrCorrupt) {
		t.Errorf("first call: lsn %d, error %v; want 200, ErrCorrupt", bad.lsn, bad.err)
	}
	if !bytes.HasPrefix(newBody, bad.body) {
		t.Errorf("fn was given %d bytes that are not the snapshot's", len(bad.body))
	}
	if good.lsn != 100 || good.err != nil || !bytes.Equal(good.body, oldBody) {
		t.Errorf("second call: lsn %d, error %v, %d bytes; want 100, nil, the old body",
			good.lsn, good.err, len(good.body))
	}
}

func TestLoadFallsBackFromEveryCutOfSmallFile(t *testing.T) {
	dir := t.TempDir()
	oldFile, oldBody := smallFile(t, 100)
	newFile, newBody := smallFile(t, 200)
	writeFile(t, dir, fileName(100), oldFile)
	for n := range newFile {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			writeFile(t, dir, fileName(200), newFile[:n])
			lsn, calls, err := loadAll(quiet, dir)
			if err != nil || lsn != 100 {
				t.Fatalf("Load = %d, %v; want 100, nil", lsn, err)
			}
			checkFellBack(t, calls, newBody, oldBody)
		})
	}
	t.Run("whole", func(t *testing.T) {
		writeFile(t, dir, fileName(200), newFile)
		if lsn, _, err := loadAll(quiet, dir); err != nil || lsn != 200 {
			t.Fatalf("Load = %d, %v; want 200, nil", lsn, err)
		}
	})
}

func TestLoadAllCorrupt(t *testing.T) {
	dir := t.TempDir()
	old := writeSnap(t, dir, 100, []byte("old"))
	cur := writeSnap(t, dir, 200, []byte("new"))
	writeFile(t, dir, fileName(100), flipAt(headerSize+frameHeadSize)(old))
	writeFile(t, dir, fileName(200), cutAt(-1)(cur))
	lsn, calls, err := loadAll(quiet, dir)
	if err == nil || lsn != 0 || len(calls) != 2 {
		t.Fatalf("Load = %d, %v with %d calls; want an error after 2", lsn, err, len(calls))
	}
	if errors.Is(err, ErrNoSnapshot) {
		t.Errorf("error %v is ErrNoSnapshot: the state would restart empty", err)
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("error %v is not ErrCorrupt", err)
	}
	for _, name := range []string{fileName(100), fileName(200)} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
}

func TestLoadFnRejects(t *testing.T) {
	dir := t.TempDir()
	writeSnap(t, dir, 100, []byte("old"))
	writeSnap(t, dir, 200, []byte("new"))
	errDecode := errors.New("cannot decode state")

	t.Run("newest", func(t *testing.T) {
		o, logs := capture()
		lsn, err := o.Load(dir, func(lsn uint64, r io.Reader) error {
			if lsn == 200 {
				return errDecode
			}
			return nil
		})
		if err != nil || lsn != 100 {
			t.Fatalf("Load = %d, %v; want 100, nil", lsn, err)
		}
		l := logs.String()
		if !strings.Contains(l, "level=WARN") || !strings.Contains(l, fileName(200)) || !strings.Contains(l, errDecode.Error()) {
			t.Errorf("no warning naming the file and the error: %s", l)
		}
	})
	t.Run("all", func(t *testing.T) {
		lsn, err := quiet.Load(dir, func(uint64, io.Reader) error { return errDecode })
		if !errors.Is(err, errDecode) || errors.Is(err, ErrNoSnapshot) || errors.Is(err, ErrCorrupt) || lsn != 0 {
			t.Fatalf("Load = %d, %v; want 0 and the callback's error only", lsn, err)
		}
	})
}

func TestLoadChecksWhatFnSkips(t *testing.T) {
	tmpl := t.TempDir()
	old := writeSnap(t, tmpl, 100, randBody(100, 1))
	cur := writeSnap(t, tmpl, 200, randBody(3<<20, 2))
	fns := []struct {
		name string
		fn   func(r io.Reader) error
	}{
		{"reads nothing", func(io.Reader) error { return nil }},
		{"reads a little", func(r io.Reader) error {
			_, err := io.ReadFull(r, make([]byte, 10))
			return err
		}},
		{"swallows the error", func(r io.Reader) error {
			_, _ = io.ReadAll(r)
			return nil
		}},
		{"reads through bufio", func(r io.Reader) error {
			_, err := io.Copy(io.Discard, bufio.NewReader(r))
			return err
		}},
	}
	for _, f := range fns {
		t.Run(f.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, fileName(100), old)
			writeFile(t, dir, fileName(200), cur)
			var seen []uint64
			fn := func(lsn uint64, r io.Reader) error {
				seen = append(seen, lsn)
				return f.fn(r)
			}
			if lsn, err := quiet.Load(dir, fn); err != nil || lsn != 200 {
				t.Fatalf("intact: Load = %d, %v; want 200", lsn, err)
			}
			writeFile(t, dir, fileName(200), flipAt(-1)(cur))
			seen = nil
			if lsn, err := quiet.Load(dir, fn); err != nil || lsn != 100 {
				t.Fatalf("damaged trailer: Load = %d, %v; want 100", lsn, err)
			}
			if fmt.Sprint(seen) != "[200 100]" {
				t.Fatalf("fn called for %v, want [200 100]", seen)
			}
		})
	}
}

func TestLoadChecksHeaderLSN(t *testing.T) {
	dir := t.TempDir()
	old := writeSnap(t, dir, 100, []byte("old"))
	// A copy of snapshot 100 under the name of 200.
	writeFile(t, dir, fileName(200), old)
	lsn, calls, err := loadAll(quiet, dir)
	if err != nil || lsn != 100 {
		t.Fatalf("Load = %d, %v; want 100", lsn, err)
	}
	if len(calls) != 2 || !errors.Is(calls[0].err, ErrCorrupt) || len(calls[0].body) != 0 {
		t.Fatalf("calls %+v: want the misnamed file refused before any byte", calls)
	}
}

func TestLoadIgnoresNonRegularEntries(t *testing.T) {
	dir := t.TempDir()
	writeSnap(t, dir, 100, []byte("old"))
	// Only regular files count: not a directory or a symlink with a
	// snapshot's name.
	if err := os.Mkdir(filepath.Join(dir, fileName(300)), dirPerm); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(dir, fileName(200))); err != nil {
		t.Fatal(err)
	}
	lsn, _, err := loadAll(quiet, dir)
	if err != nil || lsn != 100 {
		t.Fatalf("Load = %d, %v; want 100", lsn, err)
	}
}
