package transport

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"

	"backupmon/engine"
)

// A cursor marks where the next page starts (decisions.md 5). It is opaque
// to clients, URL-safe and signed, and carries the endpoint, a hash of the
// filters, the resolved time window and the last item's position, so that
// the pages of one listing share one window and nothing else can use it.
type cursor struct {
	endpoint  engine.Endpoint
	filters   [8]byte
	hasWindow bool
	from, to  int64
	pos       engine.Position
}

const (
	cursorVersion = 1
	cursorMACLen  = 16
	// maxCursorLen bounds the text decode looks at: the largest request
	// header the public listener reads, so that no cursor encode made and
	// a request can carry is refused for its length (a name of 200
	// characters takes at most 800 bytes).
	maxCursorLen = readBufferSize
)

// cursorEncoding is URL-safe base64 without padding, strict: the spare low
// bits of the last character must be zero, so that each cursor has exactly
// one text and no changed character reads as the same bytes.
var cursorEncoding = base64.RawURLEncoding.Strict()

var errBadCursor = errors.New("invalid cursor")

// cursorCodec signs and checks cursors with a secret key.
type cursorCodec struct {
	key []byte
}

// encode returns the cursor as URL-safe base64.
func (c cursorCodec) encode(cur cursor) string {
	b := make([]byte, 0, 96+len(cur.pos.Name))
	b = append(b, cursorVersion, byte(cur.endpoint))
	b = append(b, cur.filters[:]...)
	if cur.hasWindow {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.BigEndian.AppendUint64(b, uint64(cur.from))
	b = binary.BigEndian.AppendUint64(b, uint64(cur.to))
	b = binary.BigEndian.AppendUint64(b, uint64(cur.pos.Time))
	b = append(b, cur.pos.ID[:]...)
	b = binary.AppendUvarint(b, uint64(len(cur.pos.Name)))
	b = append(b, cur.pos.Name...)
	b = append(b, c.mac(b)...)
	return cursorEncoding.EncodeToString(b)
}

func (c cursorCodec) mac(b []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write(b)
	return m.Sum(nil)[:cursorMACLen]
}

// decode checks a cursor's signature and reads it. Anything not made by
// encode with the same key is errBadCursor.
func (c cursorCodec) decode(s string) (cursor, error) {
	var cur cursor
	if len(s) > maxCursorLen {
		return cur, errBadCursor
	}
	b, err := cursorEncoding.DecodeString(s)
	if err != nil || len(b) < cursorMACLen+2 {
		return cur, errBadCursor
	}
	body, sum := b[:len(b)-cursorMACLen], b[len(b)-cursorMACLen:]
	if !hmac.Equal(sum, c.mac(body)) {
		return cur, errBadCursor
	}
	const fixed = 2 + 8 + 1 + 8 + 8 + 8 + 16
	if len(body) < fixed || body[0] != cursorVersion {
		return cur, errBadCursor
	}
	cur.endpoint = engine.Endpoint(body[1])
	copy(cur.filters[:], body[2:10])
	cur.hasWindow = body[10] == 1
	cur.from = int64(binary.BigEndian.Uint64(body[11:]))
	cur.to = int64(binary.BigEndian.Uint64(body[19:]))
	cur.pos.Time = int64(binary.BigEndian.Uint64(body[27:]))
	copy(cur.pos.ID[:], body[35:51])
	n, k := binary.Uvarint(body[fixed:])
	if k <= 0 || uint64(len(body)-fixed-k) != n {
		return cur, errBadCursor
	}
	cur.pos.Name = string(body[fixed+k:])
	return cur, nil
}
