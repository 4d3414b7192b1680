package wal

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// frameHeader is the fixed part of a frame: the CRC and the type byte.
const frameHeader = 5

// castagnoli is the CRC-32C table; crc32 uses the CPU's instruction for it
// where there is one.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Reasons an entry is rejected. They are fixed values so that scanning
// damaged bytes, which tries every offset, does not allocate.
var (
	errShortFrame = errors.New("frame shorter than 5 bytes")
	errZeroType   = errors.New("record type 0")
	errCRC        = errors.New("crc mismatch")
	errBadLength  = errors.New("bad length prefix")
	errTornLength = errors.New("length prefix runs past end of file")
	errTorn       = errors.New("record runs past end of file")
)

// appendFrame appends the frame of rec to dst and returns the extended slice.
func appendFrame(dst []byte, rec Record) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, rec.Type())
	dst = rec.AppendPayload(dst)
	binary.LittleEndian.PutUint32(dst[start:], crc32.Checksum(dst[start+4:], castagnoli))
	return dst
}

// encodeFrame appends the frame of a record of type typ holding payload to
// dst and returns the extended slice.
func encodeFrame(dst []byte, typ byte, payload []byte) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, typ)
	dst = append(dst, payload...)
	binary.LittleEndian.PutUint32(dst[start:], crc32.Checksum(dst[start+4:], castagnoli))
	return dst
}

// decodeFrame checks one frame and returns its type and payload (a slice of
// frame). It returns errShortFrame, errZeroType or errCRC for a bad frame.
func decodeFrame(frame []byte) (typ byte, payload []byte, err error) {
	if len(frame) < frameHeader {
		return 0, nil, errShortFrame
	}
	typ = frame[4]
	if typ == 0 {
		return 0, nil, errZeroType
	}
	if binary.LittleEndian.Uint32(frame) != crc32.Checksum(frame[4:], castagnoli) {
		return 0, nil, errCRC
	}
	return typ, frame[frameHeader:], nil
}

// entryAt decodes the tidwall entry that starts at data[off:] (a uvarint
// length, then that many bytes of frame). It returns the frame's type and
// payload and the entry's length in bytes, or one of the reasons above.
func entryAt(data []byte, off int) (typ byte, payload []byte, n int, err error) {
	size, k := binary.Uvarint(data[off:])
	switch {
	case k == 0:
		return 0, nil, 0, errTornLength
	case k < 0:
		return 0, nil, 0, errBadLength
	case size > uint64(len(data)-off-k):
		return 0, nil, 0, errTorn
	}
	end := off + k + int(size)
	typ, payload, err = decodeFrame(data[off+k : end])
	if err != nil {
		return 0, nil, 0, err
	}
	return typ, payload, end - off, nil
}

// uvarintLen returns how many bytes the uvarint encoding of n takes.
func uvarintLen(n int) int {
	k := 1
	for x := uint64(n); x >= 0x80; x >>= 7 {
		k++
	}
	return k
}
