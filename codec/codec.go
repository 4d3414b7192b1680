// Package codec is the compact binary encoding of primitive values shared by
// log records and snapshots.
//
// Writers append to a byte slice; a Reader walks one and remembers the first
// error, so a decoder reads every field and checks Err once at the end.
package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrShort is returned (wrapped) by a Reader that ran past the end of its input.
var ErrShort = errors.New("codec: input too short")

// ErrInvalid is returned (wrapped) by a Reader that met a malformed value.
var ErrInvalid = errors.New("codec: invalid value")

// maxLen bounds every length prefix a Reader accepts, so hostile input cannot
// ask for a huge allocation.
const maxLen = 64 << 20

// AppendUvarint appends v as an unsigned varint.
func AppendUvarint(dst []byte, v uint64) []byte { return binary.AppendUvarint(dst, v) }

// AppendVarint appends v as a zig-zag signed varint.
func AppendVarint(dst []byte, v int64) []byte { return binary.AppendVarint(dst, v) }

// AppendBool appends v as one byte.
func AppendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// AppendString appends s with a length prefix.
func AppendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// AppendBytes appends b with a length prefix.
func AppendBytes(dst []byte, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// AppendFixed appends b as is, without a length (for fixed-size ids and hashes).
func AppendFixed(dst []byte, b []byte) []byte { return append(dst, b...) }

// AppendFloat appends v as 8 bytes.
func AppendFloat(dst []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
}

// Reader decodes values appended by the Append functions. After the first
// failure every read returns a zero value and Err reports the failure.
type Reader struct {
	buf []byte
	off int
	err error
}

// NewReader returns a Reader over b.
func NewReader(b []byte) *Reader { return &Reader{buf: b} }

// Reset points r at b and clears any error.
func (r *Reader) Reset(b []byte) { r.buf, r.off, r.err = b, 0, nil }

// Err returns the first error met, or nil.
func (r *Reader) Err() error { return r.err }

// Len returns how many bytes are left unread.
func (r *Reader) Len() int { return len(r.buf) - r.off }

// Fail records err as the reader's error unless one is already set.
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *Reader) fail(what string, base error) {
	r.Fail(fmt.Errorf("%w: %s at offset %d", base, what, r.off))
}

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint() uint64 { return r.uvarint("uvarint") }

// Varint reads a zig-zag signed varint: an unsigned one whose lowest bit
// is the sign, as binary.Varint reads it.
func (r *Reader) Varint() int64 {
	ux := r.uvarint("varint")
	return int64(ux>>1) ^ -int64(ux&1)
}

// uvarint reads an unsigned varint, failing with what (the kind of value)
// on short input or an overflow.
func (r *Reader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.buf[r.off:])
	if n <= 0 {
		if n == 0 {
			r.fail(what, ErrShort)
		} else {
			r.fail(what+" overflow", ErrInvalid)
		}
		return 0
	}
	r.off += n
	return v
}

// uvarintBits reads an unsigned varint that must fit in bits bits; it
// fails on a larger value and returns 0.
func (r *Reader) uvarintBits(bits int) uint64 {
	v := r.Uvarint()
	if v>>bits != 0 {
		r.Fail(fmt.Errorf("%w: %d does not fit %d bits", ErrInvalid, v, bits))
		return 0
	}
	return v
}

// Int reads a signed varint that must fit in an int.
func (r *Reader) Int() int {
	v := r.Varint()
	if v != int64(int(v)) {
		r.fail("int out of range", ErrInvalid)
		return 0
	}
	return int(v)
}

// Bool reads one byte that must be 0 or 1.
func (r *Reader) Bool() bool {
	if r.err != nil {
		return false
	}
	if r.off >= len(r.buf) {
		r.fail("bool", ErrShort)
		return false
	}
	b := r.buf[r.off]
	r.off++
	if b > 1 {
		r.fail("bool", ErrInvalid)
		return false
	}
	return b == 1
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.buf) {
		r.fail("byte", ErrShort)
		return 0
	}
	b := r.buf[r.off]
	r.off++
	return b
}

func (r *Reader) length() int {
	n := r.Uvarint()
	if r.err != nil {
		return 0
	}
	if n > maxLen || n > uint64(len(r.buf)-r.off) {
		r.fail("length", ErrShort)
		return 0
	}
	return int(n)
}

// String reads a length-prefixed string (a copy).
func (r *Reader) String() string {
	n := r.length()
	if r.err != nil || n == 0 {
		return ""
	}
	s := string(r.buf[r.off : r.off+n])
	r.off += n
	return s
}

// Bytes reads a length-prefixed byte slice (a copy; nil when empty).
func (r *Reader) Bytes() []byte { return bytes.Clone(r.View()) }

// View reads a length-prefixed byte string without copying it: the slice
// is part of the Reader's input (nil when empty).
func (r *Reader) View() []byte {
	n := r.length()
	if r.err != nil || n == 0 {
		return nil
	}
	b := r.buf[r.off : r.off+n : r.off+n]
	r.off += n
	return b
}

// Fixed fills dst with the next len(dst) bytes.
func (r *Reader) Fixed(dst []byte) {
	if r.err != nil {
		return
	}
	if len(r.buf)-r.off < len(dst) {
		r.fail("fixed bytes", ErrShort)
		return
	}
	copy(dst, r.buf[r.off:])
	r.off += len(dst)
}

// Float reads 8 bytes written by AppendFloat.
func (r *Reader) Float() float64 {
	if r.err != nil {
		return 0
	}
	if len(r.buf)-r.off < 8 {
		r.fail("float", ErrShort)
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.buf[r.off:]))
	r.off += 8
	return v
}

// Done reports an error if bytes are left over or a read failed.
func (r *Reader) Done() error {
	if r.err == nil && r.off != len(r.buf) {
		r.fail(fmt.Sprintf("%d trailing bytes", len(r.buf)-r.off), ErrInvalid)
	}
	return r.err
}
