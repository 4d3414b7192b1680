package mailparse

import "strings"

// Products: whether a mail names the product a parser reads, so that a
// parser does not take another product's mail for its own.

// mailNames reports whether m's sender, subject or first 40 lines of
// either body name word (lowercase) as a word of its own: "cove" is not in
// "recovery". namesProduct is the looser check: any substring, in more
// lines of one body.
func mailNames(m *Message, word string) bool {
	if m == nil {
		return false
	}
	if hasWord(strings.ToLower(m.From+" "+m.Subject), word) {
		return true
	}
	for _, lines := range [][]string{m.Lines, m.HTMLLines} {
		for i, l := range lines {
			if i >= 40 {
				break
			}
			if hasWord(strings.ToLower(l), word) {
				return true
			}
		}
	}
	return false
}

// hasWord reports whether w occurs in s with no letter or digit on either side.
func hasWord(s, w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i+len(w) <= len(s); {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(w)
		if (j == 0 || !isWordByte(s[j-1])) && (end == len(s) || !isWordByte(s[end])) {
			return true
		}
		i = j + 1
	}
	return false
}

// isWordByte reports whether c is an ASCII letter or digit or part of a
// multi-byte character.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// namesProduct reports whether the subject, the sender or one of the first
// 60 or last 10 lines of either body holds one of words (lowercase)
// anywhere, even inside a longer word: how a parser makes sure a mail comes
// from its product before trusting a label as common as "Status". (A
// multipart mail may name its product in the HTML part only.)
func namesProduct(m *Message, words ...string) bool {
	hay := []string{strings.ToLower(m.Subject), strings.ToLower(m.From)}
	for _, lines := range [][]string{m.TextLines, m.HTMLLines} {
		for i, l := range lines {
			if i >= 60 {
				break
			}
			hay = append(hay, strings.ToLower(l))
		}
		if n := len(lines); n > 60 {
			for _, l := range lines[max(60, n-10):] {
				hay = append(hay, strings.ToLower(l))
			}
		}
	}
	for _, h := range hay {
		for _, w := range words {
			if strings.Contains(h, w) {
				return true
			}
		}
	}
	return false
}
