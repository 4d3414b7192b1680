// Package mailgrow grows report e-mails to a given size by repeating a unit
// of their body whose repetition leaves their parse unchanged, for
// benchmarks.
//
// The unit is a table row, a line of a <pre> block or a list item of the
// HTML body, or else a line of the text body (see [Grower.Grow] for the
// order they are tried in); it is repeated in the body decoded, which is
// then encoded again as it was (quoted-printable, base64 or as it is).
package mailgrow

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/textproto"
	"slices"
	"strings"

	"backupmon/mailparse"
)

// Grow returns raw grown to at least size bytes (within a few per cent),
// with LF line endings, and whether a unit of its body could be repeated
// without changing vendor's parse of it.
func Grow(vendor string, raw []byte, size int) ([]byte, bool) {
	g, err := New(vendor, raw)
	if err != nil {
		return nil, false
	}
	msg, _, err := g.Grow(size)
	return msg, err == nil
}

// Grower grows one e-mail to one size after another, checking that the
// vendor's parser reads each grown e-mail as it reads the original.
type Grower struct {
	vendor string
	raw    []byte // LF line endings
	want   mailparse.Result
	leaves []leaf
	chosen *unit
}

// leaf is a text body of the message: raw[start:end], encoded.
type leaf struct {
	start, end int
	html       bool
	cte        string
	decoded    []byte
	ratio      float64 // encoded bytes per decoded byte
}

// unit is a span of a leaf's decoded body to repeat.
type unit struct {
	leaf       int
	start, end int
}

// New returns a Grower of raw, which vendor's parser must read.
func New(vendor string, raw []byte) (*Grower, error) {
	raw = bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n"))
	want, _, err := mailparse.Parse(vendor, raw)
	if err != nil {
		return nil, fmt.Errorf("the %s parser does not read the e-mail: %w", vendor, err)
	}
	g := &Grower{vendor: vendor, raw: raw, want: want}
	findLeaves(raw, 0, 0, &g.leaves)
	slices.SortStableFunc(g.leaves, func(a, b leaf) int { // HTML first
		if a.html == b.html {
			return 0
		}
		if a.html {
			return -1
		}
		return 1
	})
	for i := range g.leaves {
		l := &g.leaves[i]
		if l.decoded, err = decodeBody(raw[l.start:l.end], l.cte); err != nil {
			return nil, fmt.Errorf("decode body: %w", err)
		}
		l.ratio = float64(len(encodeBody(l.decoded, l.cte))) / float64(max(len(l.decoded), 1))
	}
	return g, nil
}

// Raw returns the e-mail grown from, with LF line endings.
func (g *Grower) Raw() []byte { return g.raw }

// Grow returns the e-mail grown to at least size bytes (within a few per
// cent) and what was repeated; the e-mail as it is, and "", when it is
// already as large. The units are tried HTML body first: its table rows of
// three cells or more (per-object tables; the last first), the lines of a
// <pre> block (logs; the first first), its list items (the first first),
// then its other rows (label and value; the last first); then the non-blank
// lines of the text body, the last first. The first unit whose repetition
// leaves the parse unchanged is kept and tried first for the next size.
func (g *Grower) Grow(size int) ([]byte, string, error) {
	if size <= len(g.raw) {
		return g.raw, "", nil
	}
	if g.chosen != nil {
		if b, ok := g.try(*g.chosen, size); ok {
			return b, g.describe(*g.chosen), nil
		}
	}
	for li := range g.leaves {
		for _, sp := range spans(g.leaves[li].decoded, g.leaves[li].html) {
			u := unit{leaf: li, start: sp[0], end: sp[1]}
			if b, ok := g.try(u, size); ok {
				g.chosen = &u
				return b, g.describe(u), nil
			}
		}
	}
	return nil, "", errors.New("no row or line of the body can be repeated without changing the parse")
}

// Same reports whether two parses say the same: those of a grown e-mail and
// of the e-mail it was grown from must.
func Same(a, b mailparse.Result) bool {
	return a.JobName == b.JobName && a.Status == b.Status && a.StartedAt.Equal(b.StartedAt) && a.CompletedAt.Equal(b.CompletedAt) &&
		a.DurationSeconds == b.DurationSeconds && a.SizeBytes == b.SizeBytes && a.Summary == b.Summary && a.IntegrityFailed == b.IntegrityFailed
}

// HeaderEnd returns the offset of the blank line that ends the header of
// ent, a message or a MIME entity with LF line endings: 0 when ent starts
// with it, len(ent) when there is none.
func HeaderEnd(ent []byte) int {
	if len(ent) > 0 && ent[0] == '\n' {
		return 0
	}
	if i := bytes.Index(ent, []byte("\n\n")); i >= 0 {
		return i + 1
	}
	return len(ent)
}

// findLeaves appends the text/plain and text/html bodies of the entity
// ent (at offset off of the message), walking multiparts.
func findLeaves(ent []byte, off, depth int, out *[]leaf) {
	if depth > 8 {
		return
	}
	he := HeaderEnd(ent)
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
				findLeaves(ent[part:p], off+part, depth+1, out)
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
		*out = append(*out, leaf{start: off + body, end: off + len(ent), html: mt == "text/html",
			cte: strings.ToLower(strings.TrimSpace(h.Get("Content-Transfer-Encoding")))})
	}
}

// decodeBody decodes b from cte.
func decodeBody(b []byte, cte string) ([]byte, error) {
	switch cte {
	case "quoted-printable":
		return io.ReadAll(quotedprintable.NewReader(bytes.NewReader(b)))
	case "base64":
		return base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(b)), ""))
	}
	return b, nil
}

// encodeBody encodes b for cte, with LF line endings.
func encodeBody(b []byte, cte string) []byte {
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

// spans returns the spans of a decoded body that may be repeated, in the
// order to try them (see [Grower.Grow]).
func spans(d []byte, html bool) [][2]int {
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

// try repeats u until the message reaches size and reports whether the
// parser reads it as it reads the original.
func (g *Grower) try(u unit, size int) ([]byte, bool) {
	l := &g.leaves[u.leaf]
	per := float64(u.end-u.start) * l.ratio
	n := int(float64(size-len(g.raw))/per) + 1
	var msg []byte
	for range 8 {
		msg = g.build(u, n)
		if len(msg) >= size {
			break
		}
		n += int(float64(size-len(msg))/per) + 1
	}
	r, _, err := mailparse.Parse(g.vendor, msg)
	return msg, err == nil && Same(r, g.want)
}

// build returns the message with u repeated n more times.
func (g *Grower) build(u unit, n int) []byte {
	l := &g.leaves[u.leaf]
	d := l.decoded
	body := make([]byte, 0, len(d)+n*(u.end-u.start))
	body = append(body, d[:u.end]...)
	for range n {
		body = append(body, d[u.start:u.end]...)
	}
	body = append(body, d[u.end:]...)
	enc := encodeBody(body, l.cte)
	msg := make([]byte, 0, len(g.raw)+len(enc))
	msg = append(msg, g.raw[:l.start]...)
	msg = append(msg, enc...)
	return append(msg, g.raw[l.end:]...)
}

// describe says what u repeats: the text of its row or line, shortened.
func (g *Grower) describe(u unit) string {
	l := &g.leaves[u.leaf]
	text := string(l.decoded[u.start:u.end])
	kind := "line of the text body"
	switch lower := strings.ToLower(text); {
	case !l.html:
	case strings.HasPrefix(lower, "<tr"):
		kind = "table row of the HTML body"
	case strings.HasPrefix(lower, "<li"):
		kind = "list item of the HTML body"
	default:
		kind = "line of a <pre> block of the HTML body"
	}
	if l.html {
		var b strings.Builder
		in := false
		for _, r := range text {
			switch {
			case r == '<':
				in = true
				b.WriteByte(' ')
			case r == '>':
				in = false
			case !in:
				b.WriteRune(r)
			}
		}
		text = b.String()
	}
	return fmt.Sprintf("%s %q repeated", kind, mailparse.Truncate(strings.Join(strings.Fields(text), " "), 60))
}
