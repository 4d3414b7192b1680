package suggest

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Suggestion is a likely cause for an alert's text.
type Suggestion struct {
	LikelyCause string // one or two short sentences worded as a suggestion
	Confidence  string // one of Confidences
	Category    string // one of Categories
}

// The allowed categories and confidences (decisions.md 4.6).
var (
	categories  = []string{"storage", "network", "credentials", "snapshot", "agent", "source", "schedule", "license", "configuration", "unknown"}
	confidences = []string{"low", "medium", "high"}
)

// Categories returns the allowed values of Suggestion.Category, in the
// order the contract lists them; the slice is the caller's.
func Categories() []string { return append([]string(nil), categories...) }

// Confidences returns the allowed values of Suggestion.Confidence, from
// weakest to strongest; the slice is the caller's.
func Confidences() []string { return append([]string(nil), confidences...) }

// maxInput bounds the bytes of text that are read: a summary is at most 500
// characters (2,000 bytes of UTF-8), so the bound only protects against
// callers that pass more.
const maxInput = 2048

// For returns the catalogue's suggestion for text (an alert summary, at most
// 500 characters) reported by vendor (one of veeam, acronis, datto, cove,
// synology, nakivo, backupexec, msp360, altaro, macrium, generic, or "" when
// unknown), and false when no rule matches.
func For(vendor, text string) (Suggestion, bool) {
	i := find(vendor, text)
	if i < 0 {
		return Suggestion{}, false
	}
	r := &catalogue[i]
	return Suggestion{LikelyCause: r.cause, Confidence: r.confidence, Category: r.category}, true
}

// find returns the index in catalogue of the rule that decides text, or -1.
func find(vendor, text string) int {
	if text == "" {
		return -1
	}
	low := normalize(text)
	if low == "" {
		return -1
	}
	order, ok := compiled.byVendor[vendor]
	if !ok {
		order, ok = compiled.byVendor[strings.ToLower(strings.TrimSpace(vendor))]
	}
	if !ok {
		order = compiled.general
	}
	m := matcher{text: low}
	m.grams.fill(low)
	for _, i := range order {
		if m.matches(&compiled.rules[i]) {
			return i
		}
	}
	return -1
}

// matcher holds one text's state while the rules are tried.
type matcher struct {
	text string
	// grams has a bit set for every trigram of text; a needle is searched
	// for only when all of its trigrams are present, which rules out most
	// needles without a scan of the text.
	grams gramSet
	// seen caches each needle's presence in text: 0 not yet looked for,
	// 1 absent, 2 present. Rules share needles ("agent", "repository"),
	// and each is looked for at most once.
	seen [maxNeedles]uint8
}

// matches reports whether all the parts of any one of r's alternatives hold.
func (m *matcher) matches(r *crule) bool {
next:
	for _, alt := range r.alts {
		for _, p := range alt {
			if p.re != nil {
				if !p.re.MatchString(m.text) {
					continue next
				}
				continue
			}
			s := m.seen[p.needle]
			if s == 0 {
				s = 1
				if m.grams.hasAll(compiled.needleGrams[p.needle]) && strings.Contains(m.text, compiled.needles[p.needle]) {
					s = 2
				}
				m.seen[p.needle] = s
			}
			if s == 1 {
				continue next
			}
		}
		return true
	}
	return false
}

// gramSet is a Bloom-like set of trigram hashes (one hash function, 8,192
// bits): a text of 2,048 bytes sets at most about a quarter of it, so a trigram
// the text lacks is usually reported absent.
type gramSet [gramBits / 64]uint64

const (
	gramShift = 13
	gramBits  = 1 << gramShift
)

// gramOf hashes the trigram a, b, c to a bit of a gramSet.
func gramOf(a, b, c byte) uint16 {
	return uint16((uint32(a)<<16 | uint32(b)<<8 | uint32(c)) * 0x9e3779b1 >> (32 - gramShift))
}

// gramsOf returns the distinct trigram hashes of s (none when s is shorter
// than three bytes, so that such a needle is always searched for).
func gramsOf(s string) []uint16 {
	var gs []uint16
	for i := 0; i+2 < len(s); i++ {
		if g := gramOf(s[i], s[i+1], s[i+2]); !slices.Contains(gs, g) {
			gs = append(gs, g)
		}
	}
	return gs
}

func (gs *gramSet) fill(s string) {
	for i := 0; i+2 < len(s); i++ {
		g := gramOf(s[i], s[i+1], s[i+2])
		gs[g>>6] |= 1 << (g & 63)
	}
}

func (gs *gramSet) hasAll(want []uint16) bool {
	for _, g := range want {
		if gs[g>>6]&(1<<(g&63)) == 0 {
			return false
		}
	}
	return true
}

// normalize lowercases text, turns every run of white space into one space,
// and maps typographic quotes and dashes to their ASCII forms, so that the
// catalogue's patterns can be plain lowercase substrings.
func normalize(text string) string {
	if len(text) > maxInput {
		text = text[:maxInput]
	}
	var b strings.Builder
	b.Grow(len(text))
	space := true // drops leading white space
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
				if !space {
					b.WriteByte(' ')
					space = true
				}
				continue
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			}
			b.WriteByte(c)
			space = false
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		switch r {
		case '\u2018', '\u2019', '\u201a', '\u2032':
			r = '\''
		case '\u201c', '\u201d', '\u201e', '\u2033':
			r = '"'
		case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2212':
			r = '-'
		}
		if unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
				space = true
			}
			continue
		}
		b.WriteRune(unicode.ToLower(r))
		space = false
	}
	return strings.TrimSuffix(b.String(), " ")
}

// maxNeedles bounds the distinct substrings of the catalogue, so that the
// per-call cache of a matcher has a fixed size.
const maxNeedles = 1024

// part is one condition of a pattern: a substring (an index into needles)
// or a regular expression over the normalized text.
type part struct {
	needle int
	re     *regexp.Regexp
}

// crule is a catalogue rule ready to match: it matches when all the parts
// of any one of its alternatives hold.
type crule struct {
	alts [][]part
}

// compiled is the catalogue prepared once: its patterns split into parts,
// its regular expressions compiled, and the order in which each vendor
// tries the rules.
var compiled = compile(catalogue)

type compiledCatalogue struct {
	rules       []crule
	needles     []string
	needleGrams [][]uint16       // the trigram hashes of each needle
	byVendor    map[string][]int // the vendor's own rules, then the general ones
	general     []int            // the general rules, for an unknown vendor
}

// rePrefix marks a pattern part that is a regular expression.
const rePrefix = "re:"

// compile prepares rules; a pattern is one or more parts joined by " & ",
// each a lowercase substring or, after "re:", a regular expression. It
// panics on a malformed catalogue, which the tests rule out.
func compile(rules []rule) compiledCatalogue {
	c := compiledCatalogue{rules: make([]crule, len(rules)), byVendor: map[string][]int{}}
	index := map[string]int{}
	for i, r := range rules {
		for _, pat := range r.patterns {
			var subs, res []part
			for _, s := range strings.Split(pat, " & ") {
				if expr, ok := strings.CutPrefix(s, rePrefix); ok {
					res = append(res, part{needle: -1, re: regexp.MustCompile(expr)})
					continue
				}
				n, ok := index[s]
				if !ok {
					n = len(c.needles)
					index[s] = n
					c.needles = append(c.needles, s)
				}
				subs = append(subs, part{needle: n})
			}
			// Substrings first (cheap, cached), then regular expressions.
			c.rules[i].alts = append(c.rules[i].alts, append(subs, res...))
		}
	}
	for _, n := range c.needles {
		c.needleGrams = append(c.needleGrams, gramsOf(n))
	}
	if len(c.needles) > maxNeedles {
		panic("suggest: the catalogue has more distinct substrings than maxNeedles")
	}
	for i, r := range rules {
		if len(r.vendors) == 0 {
			c.general = append(c.general, i)
		}
		for _, v := range r.vendors {
			c.byVendor[v] = append(c.byVendor[v], i)
		}
	}
	for _, v := range vendors {
		c.byVendor[v] = append(c.byVendor[v], c.general...)
	}
	return c
}

// vendors are the vendor identifiers of decisions.md section 6.
var vendors = []string{"veeam", "acronis", "datto", "cove", "synology", "nakivo", "backupexec", "msp360", "altaro", "macrium", "generic"}
