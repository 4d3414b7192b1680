package snapshot

import (
	"io"
	"os"
	"testing"
)

const benchSize = 64 << 20

// benchFill writes body in 64 KiB pieces, as an engine streaming its state
// might.
func benchFill(body []byte) func(w io.Writer) error {
	return func(w io.Writer) error {
		for len(body) > 0 {
			n := min(len(body), 64<<10)
			if _, err := w.Write(body[:n]); err != nil {
				return err
			}
			body = body[n:]
		}
		return nil
	}
}

// BenchmarkWrite writes a 64 MiB snapshot, fsync included, to a temp dir.
func BenchmarkWrite(b *testing.B) {
	body := randBody(benchSize, 1)
	dir := b.TempDir()
	b.SetBytes(benchSize)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		path, err := quiet.Write(dir, uint64(i), benchFill(body))
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := os.Remove(path); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkLoad loads a 64 MiB snapshot (from the page cache, after the
// first run), reading the body with io.Copy.
func BenchmarkLoad(b *testing.B) {
	body := randBody(benchSize, 1)
	dir := b.TempDir()
	if _, err := quiet.Write(dir, 1, benchFill(body)); err != nil {
		b.Fatal(err)
	}
	fn := func(lsn uint64, r io.Reader) error {
		_, err := io.Copy(io.Discard, r)
		return err
	}
	b.SetBytes(benchSize)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := quiet.Load(dir, fn); err != nil {
			b.Fatal(err)
		}
	}
}
