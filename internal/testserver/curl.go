package testserver

import (
	"net/http"
	"strings"
)

// Curl sends, with hc, the HTTP request a printed `curl` line describes
// (-s, -X, -H, -d and the URL; single quotes as a shell reads them), for
// the curl lines the binary prints (the demo's, `make cluster`'s) on a
// machine without curl. It touches no testing.T.
func Curl(hc *http.Client, line string) (Response, error) {
	method, url, header, body := "GET", "", map[string]string{}, []byte(nil)
	words := ShellWords(line)
	for i := 1; i < len(words); i++ {
		switch words[i] {
		case "-s":
		case "-X":
			i++
			method = words[i]
		case "-H":
			i++
			k, v, _ := strings.Cut(words[i], ":")
			header[k] = strings.TrimSpace(v)
		case "-d":
			i++
			body = []byte(words[i])
		default:
			url = words[i]
		}
	}
	return Send(hc, method, url, header, body)
}

// ShellWords splits a line on spaces, keeping single-quoted words whole
// (without their quotes).
func ShellWords(line string) []string {
	var words []string
	var cur strings.Builder
	quoted, in := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted = !quoted
			in = true
		case r == ' ' && !quoted:
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}
