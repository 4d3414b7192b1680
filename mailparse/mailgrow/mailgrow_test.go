package mailgrow

import (
	"os"
	"path/filepath"
	"testing"

	"backupmon/mailparse"
)

// TestGrowKeepsTheParse grows every sample of a vendor with a parser to two
// sizes in turn and checks each e-mail's size and parse, and that a size the
// sample already has leaves it as it is.
func TestGrowKeepsTheParse(t *testing.T) {
	n := 0
	for _, vendor := range mailparse.Vendors() {
		files, _ := filepath.Glob(filepath.Join("../../testdata/emails", vendor, "*.eml"))
		for _, f := range files {
			n++
			testGrow(t, vendor, f)
		}
	}
	if n == 0 {
		t.Fatal("no samples")
	}
}

// testGrow checks New, Grower.Grow and Grow on the sample file f.
func testGrow(t *testing.T, vendor, f string) {
	raw, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(vendor, raw)
	if err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	if msg, what, err := g.Grow(len(g.Raw())); err != nil || what != "" || string(msg) != string(g.Raw()) {
		t.Errorf("%s: at its own size: %q, %v", f, what, err)
	}
	want, _, _ := mailparse.Parse(vendor, raw)
	for _, size := range []int{len(g.Raw()) + 20_000, len(g.Raw()) + 50_000} {
		msg, what, err := g.Grow(size)
		if err != nil {
			t.Errorf("%s at %d bytes: %v", f, size, err)
			continue
		}
		got, _, err := mailparse.Parse(vendor, msg)
		if err != nil || !Same(got, want) || what == "" || len(msg) < size || len(msg) > size+size/10 {
			t.Errorf("%s at %d bytes: %d bytes, %s, parse %+v (%v), want %+v", f, size, len(msg), what, got, err, want)
		}
	}
	if msg, ok := Grow(vendor, raw, len(g.Raw())+20_000); !ok || len(msg) < len(g.Raw())+20_000 {
		t.Errorf("%s: Grow: %d bytes, %v", f, len(msg), ok)
	}
}

func TestHeaderEnd(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     int
	}{
		{"header and body", "Subject: a\nFrom: b\n\nbody\n", len("Subject: a\nFrom: b\n")},
		{"no header", "\nbody\n", 0},
		{"no blank line", "Subject: a\n", len("Subject: a\n")},
		{"empty", "", 0},
		{"first blank line only", "A: 1\n\nb\n\nc\n", len("A: 1\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := HeaderEnd([]byte(tc.in)); got != tc.want {
				t.Errorf("HeaderEnd(%q) = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}
