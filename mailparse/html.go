package mailparse

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxLines bounds the lines one body renders to.
const maxLines = 20000

// htmlLines renders an HTML body as text lines: block elements break lines,
// the cells of a table row stay on one line joined by '\t' (trailing empty
// cells dropped), entities are decoded, whitespace is collapsed, and the
// head, styles and scripts are left out.
func htmlLines(src string) []string {
	r := lineRenderer{}
	z := html.NewTokenizer(strings.NewReader(src))
	skip := 0 // depth inside head, style, script
	pre := 0  // depth inside pre, whose line breaks are kept
	for len(r.out) < maxLines {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			r.flush()
			return r.out
		case html.TextToken:
			if skip > 0 {
				continue
			}
			if pre == 0 {
				r.text(string(z.Text()))
				continue
			}
			// Inside pre each line of text is a line of its own (logs).
			for i, part := range strings.Split(string(z.Text()), "\n") {
				if i > 0 {
					r.flush()
					if len(r.out) >= maxLines {
						break
					}
				}
				r.text(part)
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			switch a {
			case atom.Head, atom.Style, atom.Script, atom.Title, atom.Noscript, atom.Template:
				if tt == html.StartTagToken {
					skip++
				} else if tt == html.EndTagToken && skip > 0 {
					skip--
				}
				continue
			}
			if skip > 0 {
				continue
			}
			if a == atom.Pre {
				if tt == html.StartTagToken {
					pre++
				} else if tt == html.EndTagToken && pre > 0 {
					pre--
				}
			}
			switch {
			case a == atom.Td || a == atom.Th:
				if tt != html.EndTagToken {
					r.cell()
				}
			case blockAtoms[a]:
				r.flush()
			}
		}
	}
	r.flush()
	return r.out
}

// blockAtoms are the elements that start a new line.
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
