package dashboard

import (
	"html/template"

	"backupmon/engine"
	"backupmon/state"
)

// The attention queue's rows are written by hand rather than by
// html/template: a workspace in trouble has thousands of them, and the
// template's reflective escaping costs about a microsecond a value. The
// writer applies the very escaping html/template would apply in each
// context; rows_test.go checks byte for byte, on fuzzed text, that the
// output equals the template's (queueRowTemplate there).

// htmlOut is an HTML buffer with html/template's escapers.
type htmlOut struct{ b []byte }

// raw appends markup as it is.
func (w *htmlOut) raw(s string) { w.b = append(w.b, s...) }

// text appends s escaped for a text node or a quoted attribute value, as
// html/template's htmlEscaper and attrEscaper do for plain strings.
func (w *htmlOut) text(s string) {
	start := 0
	for i := 0; i < len(s); i++ {
		var repl string
		switch s[i] {
		case 0:
			repl = "\uFFFD"
		case '"':
			repl = "&#34;"
		case '&':
			repl = "&amp;"
		case '\'':
			repl = "&#39;"
		case '+':
			repl = "&#43;"
		case '<':
			repl = "&lt;"
		case '>':
			repl = "&gt;"
		default:
			continue
		}
		w.b = append(w.b, s[start:i]...)
		w.b = append(w.b, repl...)
		start = i + 1
	}
	w.b = append(w.b, s[start:]...)
}

// url appends s as the path of a URL attribute after a fixed prefix:
// normalised as html/template's urlNormalizer does (bytes outside RFC
// 3986's sets percent-encoded, valid escapes kept), then escaped as an
// attribute value.
func (w *htmlOut) url(s string) {
	const hexDigits = "0123456789abcdef"
	norm := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '.', c == '_', c == '~':
		case c == '!', c == '#', c == '$', c == '&', c == '*', c == '+', c == ',', c == '/',
			c == ':', c == ';', c == '=', c == '?', c == '@', c == '[', c == ']':
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
		default:
			norm = append(norm, '%', hexDigits[c>>4], hexDigits[c&15])
			continue
		}
		norm = append(norm, c)
	}
	w.text(string(norm))
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// stamp appends the "time" partial: a time in the workspace's zone with
// UTC on hover, or a dash for none.
func (w *htmlOut) stamp(s Stamp) {
	if s.Zero {
		w.raw(`<span class="muted">—</span>`)
		return
	}
	w.raw(`<time datetime="`)
	w.text(s.ISO)
	w.raw(`" title="`)
	w.text(s.UTC)
	w.raw(`">`)
	w.text(s.Local)
	w.raw(`</time>`)
}

// pill appends a pill of class prefix+value showing value.
func (w *htmlOut) pill(prefix, value string) {
	w.raw(`<span class="pill `)
	w.raw(prefix)
	w.text(value)
	w.raw(`">`)
	w.text(value)
	w.raw(`</span>`)
}

// QueueRows returns the table rows of one group of the attention queue,
// with a selection box for each open alert when the user may triage.
func (v *view) QueueRows(items []engine.QueueItem) template.HTML {
	w := htmlOut{b: make([]byte, 0, 1024*len(items))}
	for i := range items {
		it := &items[i]
		j, a := &it.Job, it.Job.Alert
		w.raw(`<tr data-row="`)
		w.text(j.ID)
		w.raw(`"`)
		if a != nil && a.Status == "acknowledged" {
			w.raw(` class="dim"`)
		}
		w.raw(">\n")
		if v.CanTriage {
			w.raw(`<td class="sel">`)
			if a != nil {
				w.raw(`<input type="checkbox" name="alert" value="`)
				w.text(a.ID)
				w.raw(`" form="bulk" aria-label="Select `)
				w.text(j.Name)
				w.raw(`">`)
			}
			w.raw("</td>")
		}
		w.raw("\n" + `<td data-label="Job"><a data-open href="/jobs/`)
		w.url(j.ID)
		w.raw(`">`)
		w.text(j.Name)
		w.raw(`</a><div class="muted">`)
		w.text(vendorName(j.Vendor))
		w.raw(` · `)
		w.text(j.DeviceName)
		w.raw("</div></td>\n" + `<td data-label="Status">`)
		w.pill("st-", j.Status)
		if j.Overdue.Since != 0 {
			w.raw(` <span class="muted">`)
			w.text(state.SpanText(j.Overdue.Minutes))
			w.raw(` late</span>`)
			if j.Overdue.Missed != 0 {
				w.raw(`<div class="overdue">`)
				w.text(j.Overdue.MissedText())
				w.raw(`</div>`)
			}
		}
		if j.SizeDrop.Flagged() {
			w.raw(` <span class="pill sizedrop">`)
			w.text(j.SizeDrop.Text())
			w.raw(`</span>`)
		}
		w.raw("</td>\n" + `<td data-label="Alert">`)
		if a != nil {
			w.pill("sev-", a.Severity)
			w.raw(" ")
			w.pill("al-", a.Status)
			w.raw(` <span class="muted">`)
			w.text(a.Type)
			w.raw(`</span>`)
			if s := v.Summary(*a); s != "" {
				w.raw(`<div class="summary">`)
				w.text(s)
				w.raw(`</div>`)
			}
			if ai := a.AI; ai != nil {
				w.raw(`<div class="ai"><p>`)
				w.text(ai.Cause)
				w.raw(`</p><p class="muted">`)
				w.text(ai.Category)
				w.raw(` · confidence `)
				w.text(ai.Confidence)
				w.raw(` · a suggestion, not a diagnosis</p></div>`)
			}
		} else {
			w.raw(`<span class="muted">no open alert</span>`)
		}
		w.raw("</td>\n" + `<td data-label="Since">`)
		w.stamp(v.T(it.Since))
		w.raw(` <span class="muted">`)
		w.text(v.Ago(it.Since))
		w.raw("</span></td>\n" + `<td data-label="Last report">`)
		w.stamp(v.T(j.LastReportAt))
		w.raw("</td>\n</tr>\n")
	}
	return template.HTML(w.b)
}
