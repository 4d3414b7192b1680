package mailparse_test

// Benchmarks of the parse cost per vendor (bench/RESULTS.md, "Report
// e-mails"):
//
//	go test -run '^$' -bench . -benchmem ./mailparse
//
// BenchmarkParse/<vendor>/<sample> parses each sample of testdata/emails;
// BenchmarkParseLarge/<vendor> a sample grown to about 60 KB by repeating
// one of its table rows (HTML) or lines (plain text), chosen so that the
// parse stays the same; BenchmarkRead/<vendor>/<sample or large> the same
// mails' decoding alone (MIME, transfer encoding, HTML to lines), without
// the vendor's parser. Vendors without a parser yet are skipped. The grown
// mails are built by package mailgrow, as bench/mail.go builds the e-mails
// it sends.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"backupmon/mailparse"
	"backupmon/mailparse/mailgrow"
)

// benchSampleDir holds the sample e-mails, one folder per vendor.
const benchSampleDir = "../testdata/emails"

// benchLargeSize is the size of BenchmarkParseLarge's mails.
const benchLargeSize = 60_000

// benchSample is a sample e-mail of testdata/emails.
type benchSample struct {
	vendor, name string
	raw          []byte
}

// benchSamples returns the samples of the vendors that have a parser,
// sorted by vendor and name.
func benchSamples(b *testing.B) []benchSample {
	files, err := filepath.Glob(filepath.Join(benchSampleDir, "*", "*.eml"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no samples under %s: %v", benchSampleDir, err)
	}
	slices.Sort(files)
	vendors := mailparse.Vendors()
	var out []benchSample
	for _, f := range files {
		vendor := filepath.Base(filepath.Dir(f))
		if !slices.Contains(vendors, vendor) {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, benchSample{vendor: vendor, name: strings.TrimSuffix(filepath.Base(f), ".eml"), raw: raw})
	}
	return out
}

// benchLarge returns, per vendor, its first sample that can be grown to
// benchLargeSize without changing its parse, grown.
func benchLarge(b *testing.B) (vendors []string, mails map[string][]byte) {
	mails = map[string][]byte{}
	for _, s := range benchSamples(b) {
		if mails[s.vendor] != nil {
			continue
		}
		if big, ok := mailgrow.Grow(s.vendor, s.raw, benchLargeSize); ok {
			mails[s.vendor] = big
			vendors = append(vendors, s.vendor)
		}
	}
	return vendors, mails
}

func BenchmarkParse(b *testing.B) {
	for _, s := range benchSamples(b) {
		b.Run(s.vendor+"/"+s.name, func(b *testing.B) { benchParse(b, s.vendor, s.raw) })
	}
}

func BenchmarkParseLarge(b *testing.B) {
	vendors, mails := benchLarge(b)
	for _, v := range vendors {
		b.Run(v, func(b *testing.B) { benchParse(b, v, mails[v]) })
	}
}

func BenchmarkRead(b *testing.B) {
	for _, s := range benchSamples(b) {
		b.Run(s.vendor+"/"+s.name, func(b *testing.B) { benchRead(b, s.raw) })
	}
	vendors, mails := benchLarge(b)
	for _, v := range vendors {
		b.Run(v+"/large", func(b *testing.B) { benchRead(b, mails[v]) })
	}
}

func benchParse(b *testing.B, vendor string, raw []byte) {
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := mailparse.Parse(vendor, raw); err != nil {
			b.Fatal(err)
		}
	}
}

func benchRead(b *testing.B, raw []byte) {
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := mailparse.Read(raw); err != nil {
			b.Fatal(err)
		}
	}
}
