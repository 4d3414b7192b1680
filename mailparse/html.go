package mailparse

import (
	"strings"
	"unicode/utf8"

	stdhtml "html"

	"golang.org/x/net/html/atom"
)

// maxLines bounds the lines one body renders to.
const maxLines = 20000

// htmlLines renders an HTML body as text lines: block elements break lines,
// the cells of a table row stay on one line joined by '\t' (trailing empty
// cells dropped), entities are decoded, whitespace is collapsed, and the
// head, styles and scripts are left out.
//
// It scans the markup itself rather than through a full tokenizer: only tag
// names and text matter here, and report mails carry long style attributes
// that a tokenizer takes apart for nothing (a third of reading a mail).
func htmlLines(src string) []string {
	r := lineRenderer{}
	skip := 0 // depth inside head, style, script
	pre := 0  // depth inside pre, whose line breaks are kept
	for i := 0; i < len(src) && len(r.out) < maxLines; {
		lt := strings.IndexByte(src[i:], '<')
		if lt < 0 {
			lt = len(src) - i
		}
		if lt > 0 {
			if skip == 0 {
				r.htmlText(src[i:i+lt], pre > 0)
			}
			i += lt
			continue
		}
		t := scanTag(src, i)
		if t.end == i { // a '<' that opens no markup is text
			if skip == 0 {
				r.htmlText("<", pre > 0)
			}
			i++
			continue
		}
		i = t.end
		if t.name == "" {
			continue // a comment, doctype or processing instruction
		}
		a := atom.Lookup([]byte(t.name))
		switch a {
		case atom.Script, atom.Style, atom.Title, atom.Textarea, atom.Xmp, atom.Noscript, atom.Template, atom.Noframes, atom.Iframe, atom.Noembed:
			if !t.closing && !t.selfClosing {
				i = skipRawText(src, i, t.name) // its text is not markup, and never shown
			}
			continue
		case atom.Head:
			if !t.closing {
				skip++
			} else if skip > 0 {
				skip--
			}
			continue
		}
		if skip > 0 {
			continue
		}
		if a == atom.Pre {
			if !t.closing {
				pre++
			} else if pre > 0 {
				pre--
			}
		}
		switch {
		case a == atom.Td || a == atom.Th:
			if !t.closing {
				r.cell()
			}
		case blockAtoms[a]:
			r.flush()
		}
	}
	r.flush()
	if len(r.out) > maxLines {
		r.out = r.out[:maxLines]
	}
	return r.out
}

// htmlText adds a run of text, entities decoded; inside pre each line of
// it is a line of its own (logs).
func (r *lineRenderer) htmlText(s string, pre bool) {
	if strings.IndexByte(s, '&') >= 0 {
		s = stdhtml.UnescapeString(s)
	}
	if !pre {
		r.text(s)
		return
	}
	for i, part := range strings.Split(s, "\n") {
		if i > 0 {
			r.flush()
			if len(r.out) >= maxLines {
				return
			}
		}
		r.text(part)
	}
}

// tag is one piece of markup: its lowercased name ("" for a comment,
// doctype or processing instruction), whether it closes, and where it ends.
type tag struct {
	name                 string
	closing, selfClosing bool
	end                  int
}

// scanTag reads the markup that starts at src[i] == '<'. It returns end ==
// i when what follows opens no markup (as in "a < b"), so the '<' is text.
func scanTag(src string, i int) tag {
	j := i + 1
	if j >= len(src) {
		return tag{end: i}
	}
	switch c := src[j]; {
	case c == '!':
		if strings.HasPrefix(src[j:], "!--") {
			if k := strings.Index(src[j+3:], "-->"); k >= 0 {
				return tag{end: j + 3 + k + 3}
			}
			return tag{end: len(src)}
		}
		return tag{end: tagEnd(src, j)}
	case c == '?':
		return tag{end: tagEnd(src, j)}
	case c == '/':
		j++
		if j < len(src) && !isASCIILetter(src[j]) {
			return tag{end: tagEnd(src, j)} // "</ x>" and the like: a bogus comment
		}
		if j >= len(src) {
			return tag{end: i}
		}
		t := tag{closing: true}
		t.name, j = tagName(src, j)
		t.end = tagEnd(src, j)
		return t
	case isASCIILetter(c):
		var t tag
		t.name, j = tagName(src, j)
		t.end = tagEnd(src, j)
		t.selfClosing = t.end >= 2 && src[t.end-2] == '/'
		return t
	}
	return tag{end: i}
}

// tagName reads a tag name at src[j], lowercased, and returns where it ends.
func tagName(src string, j int) (string, int) {
	k := j
	for k < len(src) && src[k] != '>' && src[k] != '/' && !isHTMLSpace(src[k]) {
		k++
	}
	name := src[j:k]
	for n := 0; n < len(name); n++ {
		if c := name[n]; c >= 'A' && c <= 'Z' {
			name = strings.ToLower(name)
			break
		}
	}
	return name, k
}

// tagEnd returns the index after the '>' that ends the tag whose
// attributes start at src[j], skipping quoted values; len(src) when none.
func tagEnd(src string, j int) int {
	for j < len(src) {
		switch src[j] {
		case '>':
			return j + 1
		case '"', '\'':
			if j > 0 && src[j-1] == '=' || j > 1 && src[j-1] == ' ' && src[j-2] == '=' {
				if k := strings.IndexByte(src[j+1:], src[j]); k >= 0 {
					j += k + 2
					continue
				}
				return len(src)
			}
		}
		j++
	}
	return len(src)
}

// skipRawText returns the index after the end tag of name (script, style
// and the like) that follows src[i], or len(src) when none does.
func skipRawText(src string, i int, name string) int {
	for {
		k := strings.Index(src[i:], "</")
		if k < 0 {
			return len(src)
		}
		i += k
		if j := i + 2 + len(name); j <= len(src) && strings.EqualFold(src[i+2:j], name) && (j == len(src) || src[j] == '>' || src[j] == '/' || isHTMLSpace(src[j])) {
			return tagEnd(src, j)
		}
		i += 2
	}
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isHTMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

var blockAtoms = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Br: true, atom.Tr: true, atom.Table: true,
	atom.Tbody: true, atom.Thead: true, atom.Tfoot: true, atom.Li: true, atom.Ul: true,
	atom.Ol: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true,
	atom.H6: true, atom.Hr: true, atom.Blockquote: true, atom.Pre: true, atom.Section: true,
	atom.Header: true, atom.Footer: true, atom.Center: true, atom.Dl: true, atom.Dt: true,
	atom.Dd: true, atom.Form: true, atom.Article: true, atom.Caption: true, atom.Body: true,
	atom.Html: true, atom.Main: true, atom.Nav: true, atom.Aside: true, atom.Address: true,
	atom.Figure: true, atom.Figcaption: true, atom.Fieldset: true, atom.Legend: true,
}

// lineRenderer gathers the cells of the current line and the lines done.
type lineRenderer struct {
	cells []strings.Builder
	out   []string
}

// text adds s to the current cell, up to maxLineBytes.
func (r *lineRenderer) text(s string) {
	if len(r.cells) == 0 {
		r.cells = append(r.cells, strings.Builder{})
	}
	b := &r.cells[len(r.cells)-1]
	if room := maxLineBytes - b.Len(); room > 0 {
		b.WriteString(cutLine(s[:min(len(s), room+utf8.UTFMax)]))
	}
}

// cell starts the current line's next cell, or its first when it has none.
func (r *lineRenderer) cell() {
	if len(r.cells) == 0 {
		r.cells = append(r.cells, strings.Builder{})
		return
	}
	r.cells = append(r.cells, strings.Builder{})
}

// flush ends the current line: its cells, cleaned and joined by '\t',
// become a line of out unless they are all empty.
func (r *lineRenderer) flush() {
	if len(r.cells) == 0 {
		return
	}
	parts := make([]string, len(r.cells))
	for i := range r.cells {
		parts[i] = clean(r.cells[i].String())
	}
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	r.cells = r.cells[:0]
	if len(parts) == 0 {
		return
	}
	// A row whose first cells are empty (a spacer column) keeps them: the
	// columns of a table stay where its header says.
	line := strings.Join(parts, "\t")
	if strings.Trim(line, "\t") != "" {
		r.out = append(r.out, line)
	}
}
