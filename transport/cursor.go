package transport

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"

	"backupmon/engine"
)

// A cursor marks where the next page starts (decisions.md 5). It carries
// the workspace it was issued in, the endpoint, a hash of the filters, the
// resolved time window and the last item's position, so that the pages of
// one listing share one window and nothing else can use it.
type cursor struct {
	workspace engine.ID
	endpoint  engine.Endpoint
	filters   [8]byte
	hasWindow bool
	from, to  int64
	pos       engine.Position
}

// The cursor's text is URL-safe base64 of tag · ciphertext: tag is the first
// 16 bytes of an HMAC-SHA256 of the plaintext, and the ciphertext is the
// plaintext under AES-256-CTR with the tag as its IV (a synthetic IV, as in
// SIV). The tag signs the cursor and the encryption makes it opaque: the
// position's name (a job or client name) cannot be read from it. The same
// plaintext always gives the same text, so each cursor has one spelling.
//
// Plaintext: version · endpoint · workspace (16) · filters (8) · window flag
// · from (8) · to (8) · position time (8) · position id (16) · uvarint name
// length · name.
const (
	cursorVersion = 2
	cursorTagLen  = 16 // also the AES block size, the IV's length
	cursorFixed   = 1 + 1 + 16 + 8 + 1 + 8 + 8 + 8 + 16
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

// cursorCodec signs, encrypts and checks cursors with keys derived from
// one secret.
type cursorCodec struct {
	macKey []byte
	block  cipher.Block // AES-256; safe for concurrent use
}

// newCursorCodec derives the signing and the encryption key from secret.
func newCursorCodec(secret []byte) cursorCodec {
	derive := func(label string) []byte {
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(label))
		return m.Sum(nil)
	}
	block, err := aes.NewCipher(derive("backupmon cursor encryption"))
	if err != nil {
		panic("transport: cursor cipher: " + err.Error()) // a 32-byte key never fails
	}
	return cursorCodec{macKey: derive("backupmon cursor signature"), block: block}
}

// encode returns the cursor as URL-safe base64.
func (c cursorCodec) encode(cur cursor) string {
	n := len(cur.pos.Name)
	b := make([]byte, cursorTagLen, cursorTagLen+cursorFixed+binary.MaxVarintLen64+n)
	b = append(b, cursorVersion, byte(cur.endpoint))
	b = append(b, cur.workspace[:]...)
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
	b = binary.AppendUvarint(b, uint64(n))
	b = append(b, cur.pos.Name...)
	tag, plain := b[:cursorTagLen], b[cursorTagLen:]
	copy(tag, c.tag(plain))
	cipher.NewCTR(c.block, tag).XORKeyStream(plain, plain)
	return cursorEncoding.EncodeToString(b)
}

func (c cursorCodec) tag(plain []byte) []byte {
	m := hmac.New(sha256.New, c.macKey)
	m.Write(plain)
	return m.Sum(nil)[:cursorTagLen]
}

// decode decrypts a cursor, checks its tag and reads it. Anything not made
// by encode with the same secret is errBadCursor.
func (c cursorCodec) decode(s string) (cursor, error) {
	var cur cursor
	if len(s) > maxCursorLen {
		return cur, errBadCursor
	}
	b, err := cursorEncoding.DecodeString(s)
	if err != nil || len(b) < cursorTagLen+cursorFixed+1 {
		return cur, errBadCursor
	}
	tag, body := b[:cursorTagLen], b[cursorTagLen:]
	cipher.NewCTR(c.block, tag).XORKeyStream(body, body)
	if !hmac.Equal(tag, c.tag(body)) || body[0] != cursorVersion {
		return cur, errBadCursor
	}
	cur.endpoint = engine.Endpoint(body[1])
	copy(cur.workspace[:], body[2:18])
	copy(cur.filters[:], body[18:26])
	cur.hasWindow = body[26] == 1
	cur.from = int64(binary.BigEndian.Uint64(body[27:]))
	cur.to = int64(binary.BigEndian.Uint64(body[35:]))
	cur.pos.Time = int64(binary.BigEndian.Uint64(body[43:]))
	copy(cur.pos.ID[:], body[51:67])
	n, k := binary.Uvarint(body[cursorFixed:])
	if k <= 0 || uint64(len(body)-cursorFixed-k) != n {
		return cur, errBadCursor
	}
	cur.pos.Name = string(body[cursorFixed+k:])
	return cur, nil
}
