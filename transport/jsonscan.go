package transport

import (
	"bytes"
	"unicode/utf8"

	"backupmon/jsonx"
)

// maxJSONDepth is the deepest nesting accepted, as in encoding/json.
const maxJSONDepth = 10000

// scanObject checks that b is exactly one JSON object (with optional
// surrounding whitespace) and, for each top-level member whose key is in
// names, stores where its raw value starts and ends in b (b[start:end]) in
// spans at the key's index, leaving {0, 0} for a key not there; a key given twice
// keeps its last value, as encoding/json does. It allocates nothing unless a
// key holds an escape. It returns false for anything that is not valid JSON
// or not an object; text that is not Unicode (bytes that are not UTF-8, a
// \u escape of half a surrogate pair) is not valid JSON (RFC 8259 8.1).
//
// It is the report path's parser: a full syntax check without building
// values, so a report body costs no allocation to read.
func scanObject(b []byte, names []string, spans [][2]int) bool {
	s := scanner{b: b, names: names, spans: spans}
	s.space()
	if s.i >= len(b) || b[s.i] != '{' || !s.container(1, '}') {
		return false
	}
	s.space()
	return s.i == len(b)
}

// keyIndex returns the index in names of a raw (still escaped) key, or -1.
func keyIndex(raw []byte, names []string) int {
	if bytes.IndexByte(raw, '\\') >= 0 {
		var k string
		quoted := make([]byte, 0, len(raw)+2)
		quoted = append(append(append(quoted, '"'), raw...), '"')
		if jsonx.Unmarshal(quoted, &k) != nil {
			return -1
		}
		raw = []byte(k)
	}
	for i, n := range names {
		if string(raw) == n {
			return i
		}
	}
	return -1
}

type scanner struct {
	b     []byte
	i     int
	names []string // keys whose top-level values are wanted
	spans [][2]int // where their raw values are in b, by index in names
	// (positions, not slices of b: a slice of b stored through s would let
	// the caller's array escape to the heap)
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value checks one JSON value starting at s.i.
func (s *scanner) value(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.container(depth+1, '}')
	case c == '[':
		return s.container(depth+1, ']')
	case c == '"':
		return s.string()
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return false
}

func (s *scanner) literal(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// container checks an object (end '}') or an array (end ']') whose
// opening byte is at s.i, at nesting depth.
func (s *scanner) container(depth int, end byte) bool {
	if depth > maxJSONDepth {
		return false
	}
	s.i++
	s.space()
	if s.i < len(s.b) && s.b[s.i] == end {
		s.i++
		return true
	}
	for {
		s.space()
		var ok bool
		if end == '}' {
			ok = s.member(depth)
		} else {
			ok = s.value(depth)
		}
		if !ok {
			return false
		}
		s.space()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case end:
			s.i++
			return true
		default:
			return false
		}
	}
}

// member checks one "key": value of an object at nesting depth, keeping
// the value when the object is the top one and the key is wanted.
func (s *scanner) member(depth int) bool {
	kStart := s.i
	if !s.string() {
		return false
	}
	key := s.b[kStart+1 : s.i-1]
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return false
	}
	s.i++
	s.space()
	vStart := s.i
	if !s.value(depth) {
		return false
	}
	if depth == 1 {
		if k := keyIndex(key, s.names); k >= 0 {
			s.spans[k] = [2]int{vStart, s.i}
		}
	}
	return true
}

// string checks a JSON string starting at its opening quote. Bytes of 0x80
// and above pass as they are (encoding/json accepts invalid UTF-8 too).
func (s *scanner) string() bool {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return false
	}
	s.i++
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			s.i++
			if s.i >= len(s.b) {
				return false
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				r, ok := s.escapedRune()
				switch {
				case !ok, r >= 0xDC00 && r <= 0xDFFF:
					return false // a low surrogate alone
				case r >= 0xD800 && r <= 0xDBFF:
					// Half a pair: the other half must follow.
					if !bytes.HasPrefix(s.b[s.i:], []byte(`\u`)) {
						return false
					}
					s.i++
					if low, ok := s.escapedRune(); !ok || low < 0xDC00 || low > 0xDFFF {
						return false
					}
				}
			default:
				return false
			}
		case c >= utf8.RuneSelf:
			// Not UTF-8 (an encoded surrogate included) is not JSON: read
			// as U+FFFD, two idempotency keys could read as one.
			r, size := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && size == 1 {
				return false
			}
			s.i += size
		default:
			s.i++
		}
	}
	return false
}

// escapedRune reads the four hex digits of a \u escape, s.i being at the
// 'u', and moves past them.
func (s *scanner) escapedRune() (rune, bool) {
	if len(s.b)-s.i < 5 {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i+1 : s.i+5] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	s.i += 5
	return r, true
}

// number checks -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?
func (s *scanner) number() bool {
	b := s.b
	if s.i < len(b) && b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(b) && b[s.i] == '0':
		s.i++
	case s.i < len(b) && b[s.i] >= '1' && b[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.i < len(b) && b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return false
		}
	}
	if s.i < len(b) && (b[s.i] == 'e' || b[s.i] == 'E') {
		s.i++
		if s.i < len(b) && (b[s.i] == '+' || b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

// digits steps past a run of decimal digits and returns its length.
func (s *scanner) digits() int {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}

// jsonString returns the text of a raw JSON string value (quotes included in
// raw); false when raw is not a string.
func jsonString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	// Without escapes the text is the bytes between the quotes, unless
	// they are not valid UTF-8: encoding/json (and jsonx) then write
	// U+FFFD for each bad byte, and so must we, or one key could be read two
	// ways.
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw[1 : len(raw)-1]), true
	}
	var v string
	if jsonx.Unmarshal(raw, &v) != nil {
		return "", false
	}
	return v, true
}
