package mailparse

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
// mails are built like bench/mail.go builds the e-mails it sends.

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

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
	files, err := filepath.Glob(filepath.Join(sampleDir, "*", "*.eml"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no samples under %s: %v", sampleDir, err)
	}
	slices.Sort(files)
	var out []benchSample
	for _, f := range files {
		vendor := filepath.Base(filepath.Dir(f))
		if parsers[vendor] == nil {
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
		if big, ok := benchGrow(s.vendor, s.raw, benchLargeSize); ok {
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
		if _, _, err := Parse(vendor, raw); err != nil {
			b.Fatal(err)
		}
	}
}

func benchRead(b *testing.B, raw []byte) {
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// benchGrow returns raw grown to at least size bytes by repeating a table
// row of its HTML body (preferring rows of three cells or more, the last
// first) or else a line of its text body (the last first): the first whose
// repetition leaves vendor's parse of the mail unchanged.
func benchGrow(vendor string, raw []byte, size int) ([]byte, bool) {
	raw = bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n"))
	want, _, err := Parse(vendor, raw)
	if err != nil {
		return nil, false
	}
	var leaves []benchLeaf
	benchLeaves(raw, 0, 0, &leaves)
	slices.SortStableFunc(leaves, func(a, b benchLeaf) int { // HTML first
		switch {
		case a.html == b.html:
			return 0
		case a.html:
			return -1
		}
		return 1
	})
	for _, l := range leaves {
		dec, err := benchDecode(raw[l.start:l.end], l.cte)
		if err != nil {
			continue
		}
		ratio := float64(len(benchEncode(dec, l.cte))) / float64(max(len(dec), 1))
		for _, u := range benchUnits(dec, l.html) {
			per := float64(u[1]-u[0]) * ratio
			n := int(float64(size-len(raw))/per) + 1
			var msg []byte
			for range 8 {
				body := slices.Concat(dec[:u[1]], bytes.Repeat(dec[u[0]:u[1]], n), dec[u[1]:])
				msg = slices.Concat(raw[:l.start], benchEncode(body, l.cte), raw[l.end:])
				if len(msg) >= size {
					break
				}
				n += int(float64(size-len(msg))/per) + 1
			}
			if got, _, err := Parse(vendor, msg); err == nil && benchSame(got, want) {
				return msg, true
			}
		}
	}
	return nil, false
}

// benchLeaf is a text body of a message: raw[start:end], encoded.
type benchLeaf struct {
	start, end int
	html       bool
	cte        string
}

// benchHeaderEnd returns the offset of the blank line ending ent's header.
func benchHeaderEnd(ent []byte) int {
	if len(ent) > 0 && ent[0] == '\n' {
		return 0
	}
	if i := bytes.Index(ent, []byte("\n\n")); i >= 0 {
		return i + 1
	}
	return len(ent)
}

// benchLeaves appends the text/plain and text/html bodies of ent (at
// offset off of the message), walking multiparts.
func benchLeaves(ent []byte, off, depth int, out *[]benchLeaf) {
	if depth > 8 {
		return
	}
	he := benchHeaderEnd(ent)
	body := min(he+1, len(ent))
	h, err := textproto.NewReader(bufio.NewReader(bytes.NewReader(append(slices.Clip(ent[:he]), '\n')))).ReadMIMEHeader()
	if err != nil && len(h) == 0 && he > 0 {
		return
	}
	ct := h.Get("Content-Type")
	if ct == "" {
		ct = "text/plain"
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return
	}
	switch {
	case strings.HasPrefix(mt, "multipart/") && params["boundary"] != "":
		delim := []byte("\n--" + params["boundary"])
		pos, part := max(body-1, 0), -1
		for {
			k := bytes.Index(ent[pos:], delim)
			if k < 0 {
				return
			}
			p := pos + k
			if part >= 0 && part <= p {
				benchLeaves(ent[part:p], off+part, depth+1, out)
			}
			after := p + len(delim)
			if bytes.HasPrefix(ent[after:], []byte("--")) {
				return
			}
			nl := bytes.IndexByte(ent[after:], '\n')
			if nl < 0 {
				return
			}
			part, pos = after+nl+1, after+nl
		}
	case mt == "text/html" || mt == "text/plain":
		*out = append(*out, benchLeaf{start: off + body, end: off + len(ent), html: mt == "text/html",
			cte: strings.ToLower(strings.TrimSpace(h.Get("Content-Transfer-Encoding")))})
	}
}

func benchDecode(b []byte, cte string) ([]byte, error) {
	switch cte {
	case "quoted-printable":
		return io.ReadAll(quotedprintable.NewReader(bytes.NewReader(b)))
	case "base64":
		return base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(b)), ""))
	}
	return b, nil
}

// benchEncode encodes b for cte, with LF line endings.
func benchEncode(b []byte, cte string) []byte {
	var out bytes.Buffer
	switch cte {
	case "quoted-printable":
		w := quotedprintable.NewWriter(&out)
		w.Write(b)
		w.Close()
		return bytes.ReplaceAll(out.Bytes(), []byte("\r\n"), []byte("\n"))
	case "base64":
		s := base64.StdEncoding.EncodeToString(b)
		for len(s) > 76 {
			out.WriteString(s[:76])
			out.WriteByte('\n')
			s = s[76:]
		}
		out.WriteString(s)
		out.WriteByte('\n')
		return out.Bytes()
	}
	return b
}

// benchUnits returns the spans of a decoded body that may be repeated to grow a
// mail, in the order to try them. HTML: the table rows of three cells or
// more (per-object tables; the last first), the lines of a <pre> block
// (logs; the first first), the items of a list (the first first), then the
// other rows (label and value; the last first). Text: the non-blank lines,
// the last first.
func benchUnits(d []byte, html bool) [][2]int {
	if !html {
		var lines [][2]int
		for s := 0; s < len(d); {
			e := bytes.IndexByte(d[s:], '\n')
			if e < 0 {
				break // a last line without its newline
			}
			if len(bytes.TrimSpace(d[s:s+e])) > 0 {
				lines = append(lines, [2]int{s, s + e + 1})
			}
			s += e + 1
		}
		slices.Reverse(lines)
		return lines
	}
	lower := bytes.ToLower(d)
	// elements returns the spans of the elements named tag that hold none
	// of nested, with the newline after each.
	elements := func(tag string, nested ...string) (spans [][2]int) {
		open, end := []byte("<"+tag), []byte("</"+tag+">")
		for i := 0; ; {
			k := bytes.Index(lower[i:], open)
			if k < 0 {
				return spans
			}
			s := i + k
			i = s + len(open)
			if i < len(lower) && !strings.ContainsRune("> \n\t", rune(lower[i])) {
				continue // <track for <tr, <link for <li…
			}
			e := bytes.Index(lower[i:], end)
			if e < 0 {
				return spans
			}
			inner := lower[i : i+e]
			if slices.ContainsFunc(nested, func(n string) bool { return bytes.Contains(inner, []byte("<"+n)) }) {
				continue
			}
			stop := i + e + len(end)
			if stop < len(d) && d[stop] == '\n' {
				stop++
			}
			spans = append(spans, [2]int{s, stop})
		}
	}
	var rows, short [][2]int
	for _, r := range elements("tr", "tr", "table") {
		inner := lower[r[0]:r[1]]
		if bytes.Count(inner, []byte("<td"))+bytes.Count(inner, []byte("<th")) >= 3 {
			rows = append(rows, r)
		} else {
			short = append(short, r)
		}
	}
	slices.Reverse(rows)
	slices.Reverse(short)
	var pre [][2]int
	for _, b := range elements("pre") {
		s := b[0] + bytes.IndexByte(lower[b[0]:b[1]], '>') + 1
		for {
			e := bytes.IndexByte(d[s:b[1]], '\n')
			if e < 0 {
				break // the last line, which ends at </pre>
			}
			if len(bytes.TrimSpace(d[s:s+e])) > 0 {
				pre = append(pre, [2]int{s, s + e + 1})
			}
			s += e + 1
		}
	}
	return slices.Concat(rows, pre, elements("li", "li", "ul", "ol"), short)
}

// benchSame reports whether two parses say the same.
func benchSame(a, b Result) bool {
	return a.JobName == b.JobName && a.Status == b.Status && a.StartedAt.Equal(b.StartedAt) && a.CompletedAt.Equal(b.CompletedAt) &&
		a.DurationSeconds == b.DurationSeconds && a.SizeBytes == b.SizeBytes && a.Summary == b.Summary && a.IntegrityFailed == b.IntegrityFailed
}
