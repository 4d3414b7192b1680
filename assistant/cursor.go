package assistant

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// Cursors are opaque to the assistant: the tool that made them and the
// offset of the next item. A list that changes between pages may shift by
// the items added or removed, as offsets do.

const (
	defaultLimit = 50
	maxLimit     = 200
)

const errCursor = refusal("cursor is not one this tool returned; start again without it")

func makeCursor(tool string, offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(tool + ":" + strconv.Itoa(offset)))
}

// readCursor returns the offset a cursor of tool holds (0 for none).
func readCursor(tool, c string) (int, error) {
	if c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(c)
	if err != nil {
		return 0, errCursor
	}
	name, num, ok := strings.Cut(string(b), ":")
	n, err := strconv.Atoi(num)
	// The cursor must be the one spelling makeCursor makes: base64 skips
	// line breaks, and strconv takes "+1" and "01".
	if !ok || name != tool || err != nil || n < 0 || n > 1<<30 || makeCursor(tool, n) != c {
		return 0, errCursor
	}
	return n, nil
}

// page returns the offset and limit a list tool reads, from its cursor and
// limit inputs.
func page(tool, cursor string, limit int) (offset, n int, err error) {
	if offset, err = readCursor(tool, cursor); err != nil {
		return 0, 0, err
	}
	if limit == 0 {
		limit = defaultLimit
	}
	return offset, limit, nil
}

// next returns the cursor after a page of n items at offset of total, or
// "" at the end.
func next(tool string, offset, n, total int) string {
	if offset+n >= total {
		return ""
	}
	return makeCursor(tool, offset+n)
}
