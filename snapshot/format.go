package snapshot

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

const (
	magic         = "BMSNAP01"
	formatVersion = 1

	headerSize    = 36         // magic, version, chunk size, lsn, created, crc
	frameHeadSize = 8          // chunk length, crc
	trailerSize   = 24         // end marker, body length, chunk count, crc
	endMarker     = 0xFFFFFFFF // length field value that starts the trailer

	// maxChunkSize bounds the chunk size a reader accepts, and with it the
	// memory a reader uses whatever the snapshot size.
	maxChunkSize = 1 << 20
	// defaultChunkSize is the chunk size Write uses.
	defaultChunkSize = maxChunkSize
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var le = binary.LittleEndian

// header is the fixed-size start of a snapshot file.
type header struct {
	chunkSize uint32
	lsn       uint64
	created   int64 // unix milliseconds
}

// appendHeader appends h's encoding to dst and returns it with the running
// crc at the end of the header.
func appendHeader(dst []byte, h header) ([]byte, uint32) {
	start := len(dst)
	dst = append(dst, magic...)
	dst = le.AppendUint32(dst, formatVersion)
	dst = le.AppendUint32(dst, h.chunkSize)
	dst = le.AppendUint64(dst, h.lsn)
	dst = le.AppendUint64(dst, uint64(h.created))
	crc := crc32.Update(0, castagnoli, dst[start:])
	return le.AppendUint32(dst, crc), crc
}

// parseHeader decodes and checks a header and returns it with the running
// crc at its end. It fails with an error wrapping ErrCorrupt.
func parseHeader(b *[headerSize]byte) (header, uint32, error) {
	if string(b[:8]) != magic {
		return header{}, 0, fmt.Errorf("%w: bad magic %q", ErrCorrupt, b[:8])
	}
	crc := crc32.Update(0, castagnoli, b[:headerSize-4])
	if got := le.Uint32(b[headerSize-4:]); got != crc {
		return header{}, 0, fmt.Errorf("%w: header checksum mismatch", ErrCorrupt)
	}
	if v := le.Uint32(b[8:]); v != formatVersion {
		return header{}, 0, fmt.Errorf("%w: unsupported format version %d", ErrCorrupt, v)
	}
	h := header{
		chunkSize: le.Uint32(b[12:]),
		lsn:       le.Uint64(b[16:]),
		created:   int64(le.Uint64(b[24:])),
	}
	if h.chunkSize == 0 || h.chunkSize > maxChunkSize {
		return header{}, 0, fmt.Errorf("%w: bad chunk size %d", ErrCorrupt, h.chunkSize)
	}
	return h, crc, nil
}
