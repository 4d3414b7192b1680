package snapshot

import (
	"bytes"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"backupmon/internal/syncbuf"
)

// quiet is the Options the tests use unless they look at the logs.
var quiet = Options{Logger: slog.New(slog.DiscardHandler)}

// randBody returns n pseudo-random bytes, the same for the same seed.
func randBody(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// encodeBytes returns the snapshot file bytes for h and body.
func encodeBytes(t testing.TB, h header, body []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	err := encode(&buf, h, func(w io.Writer) error {
		_, err := w.Write(body)
		return err
	})
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return buf.Bytes()
}

// decodeBytes reads a whole snapshot file's body from data.
func decodeBytes(data []byte) ([]byte, *reader, error) {
	r := newReader(bytes.NewReader(data))
	body, err := io.ReadAll(r)
	return body, r, err
}

// writeFile puts raw file bytes into dir under name.
func writeFile(t testing.TB, dir, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), data, filePerm); err != nil {
		t.Fatal(err)
	}
}

// writeSnap writes a snapshot of body for lsn with Write and returns the
// file's bytes.
func writeSnap(t testing.TB, dir string, lsn uint64, body []byte) []byte {
	t.Helper()
	path, err := quiet.Write(dir, lsn, func(w io.Writer) error {
		_, err := w.Write(body)
		return err
	})
	if err != nil {
		t.Fatalf("Write(%d): %v", lsn, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// dirNames returns the sorted names in dir.
func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// call records one call of a Load callback.
type call struct {
	lsn  uint64
	body []byte
	err  error
}

// loadAll runs Load with a callback that reads everything with io.ReadAll
// and returns the reader's error, and returns what each call saw.
func loadAll(o Options, dir string) (uint64, []call, error) {
	var calls []call
	lsn, err := o.Load(dir, func(lsn uint64, r io.Reader) error {
		body, err := io.ReadAll(r)
		calls = append(calls, call{lsn: lsn, body: body, err: err})
		return err
	})
	return lsn, calls, err
}

// capture returns Options logging into the returned buffer.
func capture() (Options, *syncbuf.Buffer) {
	lb := &syncbuf.Buffer{}
	h := slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug})
	return Options{Logger: slog.New(h)}, lb
}
