package codec

import "fmt"

// Fields walks the fields of a value in order, either appending each one
// (an encoder, from Encoder) or reading each one into place (a decoder,
// from Decoder). A type says its layout once, in one method that takes a
// *Fields, and that method both writes and reads it:
//
//	func (r *Thing) fields(f *codec.Fields) {
//		f.Fixed(r.ID[:])
//		f.String(&r.Name)
//		f.Varint(&r.At)
//	}
//
// A decoder remembers its first failure (Err); every later read leaves its
// field at the zero value.
type Fields struct {
	buf []byte  // the encoder's output
	r   *Reader // the decoder's input (&rd); nil when encoding
	rd  Reader
}

// Encoder returns a Fields that appends to dst.
func Encoder(dst []byte) *Fields { return &Fields{buf: dst} }

// Decoder returns a Fields that reads from b.
func Decoder(b []byte) *Fields {
	f := &Fields{}
	f.ResetDecoder(b)
	return f
}

// ResetDecoder makes f a decoder reading from b (for reuse: a pooled
// Fields decodes without allocating).
func (f *Fields) ResetDecoder(b []byte) {
	f.rd.Reset(b)
	f.buf, f.r = nil, &f.rd
}

// Decoding reports whether f reads (true) or writes (false).
func (f *Fields) Decoding() bool { return f.r != nil }

// Bytes returns what an encoder has appended, with the dst it started from.
func (f *Fields) Bytes() []byte { return f.buf }

// Reader returns a decoder's Reader (nil for an encoder), for checks a
// layout makes on what is left.
func (f *Fields) Reader() *Reader { return f.r }

// Err returns a decoder's first failure, or nil.
func (f *Fields) Err() error {
	if f.r == nil {
		return nil
	}
	return f.r.Err()
}

// Done returns a decoder's first failure, or an error when input is left
// over; nil for an encoder.
func (f *Fields) Done() error {
	if f.r == nil {
		return nil
	}
	return f.r.Done()
}

// Fail makes a decoder fail with err (the first failure wins).
func (f *Fields) Fail(err error) {
	if f.r != nil {
		f.r.Fail(err)
	}
}

// Uvarint walks an unsigned varint.
func (f *Fields) Uvarint(p *uint64) {
	if f.r != nil {
		*p = f.r.Uvarint()
		return
	}
	f.buf = AppendUvarint(f.buf, *p)
}

// Varint walks a signed varint.
func (f *Fields) Varint(p *int64) {
	if f.r != nil {
		*p = f.r.Varint()
		return
	}
	f.buf = AppendVarint(f.buf, *p)
}

// Int walks an int as a signed varint (a decoder refuses one that does not
// fit).
func (f *Fields) Int(p *int) {
	if f.r != nil {
		*p = f.r.Int()
		return
	}
	f.buf = AppendVarint(f.buf, int64(*p))
}

// Uint16 walks a uint16 as an unsigned varint (a decoder refuses a larger
// value).
func (f *Fields) Uint16(p *uint16) {
	if f.r != nil {
		*p = uint16(f.r.uvarintBits(16))
		return
	}
	f.buf = AppendUvarint(f.buf, uint64(*p))
}

// Uint32 walks a uint32 as an unsigned varint (a decoder refuses a larger
// value).
func (f *Fields) Uint32(p *uint32) {
	if f.r != nil {
		*p = uint32(f.r.uvarintBits(32))
		return
	}
	f.buf = AppendUvarint(f.buf, uint64(*p))
}

// Int32 walks an int32 as a signed varint (a decoder refuses a value out
// of its range).
func (f *Fields) Int32(p *int32) {
	if f.r != nil {
		v := f.r.Varint()
		if v < -1<<31 || v >= 1<<31 {
			f.r.Fail(fmt.Errorf("%w: %d does not fit 32 bits", ErrInvalid, v))
			v = 0
		}
		*p = int32(v)
		return
	}
	f.buf = AppendVarint(f.buf, int64(*p))
}

// Bool walks a bool as one byte.
func (f *Fields) Bool(p *bool) {
	if f.r != nil {
		*p = f.r.Bool()
		return
	}
	f.buf = AppendBool(f.buf, *p)
}

// Byte walks one byte.
func (f *Fields) Byte(p *byte) {
	if f.r != nil {
		*p = f.r.Byte()
		return
	}
	f.buf = append(f.buf, *p)
}

// String walks a length-prefixed string.
func (f *Fields) String(p *string) {
	if f.r != nil {
		*p = f.r.String()
		return
	}
	f.buf = AppendString(f.buf, *p)
}

// Fixed walks b as is, without a length (ids and hashes): a decoder fills
// it.
func (f *Fields) Fixed(b []byte) {
	if f.r != nil {
		f.r.Fixed(b)
		return
	}
	f.buf = append(f.buf, b...)
}

// Float walks a float64 as 8 bytes.
func (f *Fields) Float(p *float64) {
	if f.r != nil {
		*p = f.r.Float()
		return
	}
	f.buf = AppendFloat(f.buf, *p)
}

// Count walks the length of a list of n items, each at least minSize bytes
// long when encoded: an encoder writes n, a decoder reads it (refusing a
// count that the input left cannot hold, so hostile input cannot ask for a
// huge allocation) and returns it.
func (f *Fields) Count(n, minSize int) int {
	if f.r == nil {
		f.buf = AppendUvarint(f.buf, uint64(n))
		return n
	}
	v := f.r.Uvarint()
	if minSize < 1 {
		minSize = 1
	}
	if v > uint64(f.r.Len()/minSize) {
		f.r.Fail(fmt.Errorf("%w: %d items in %d bytes", ErrShort, v, f.r.Len()))
		return 0
	}
	return int(v)
}

// Slice walks a list: its length (Count, items of at least minSize bytes),
// then each item with walk. A decoder makes the list (nil when empty).
func Slice[T any](f *Fields, list *[]T, minSize int, walk func(f *Fields, item *T)) {
	n := f.Count(len(*list), minSize)
	if f.Decoding() {
		*list = nil
		if n > 0 {
			*list = make([]T, n)
		}
	}
	for i := 0; i < n && f.Err() == nil; i++ {
		walk(f, &(*list)[i])
	}
}

// ResetEncoder makes f an encoder appending to dst (for reuse).
func (f *Fields) ResetEncoder(dst []byte) { f.buf, f.r = dst, nil }

// Blob walks a length-prefixed byte string; a decoder gives *p a copy.
func (f *Fields) Blob(p *[]byte) {
	if f.r != nil {
		*p = f.r.Bytes()
		return
	}
	f.buf = AppendBytes(f.buf, *p)
}

// Delta walks *p as its difference from base (a signed varint), for values
// that sit close to one another (times in order).
func (f *Fields) Delta(p *int64, base int64) {
	if f.r != nil {
		*p = base + f.r.Varint()
		return
	}
	f.buf = AppendVarint(f.buf, *p-base)
}

// Walk walks each field in turn, by its type: *uint64 (Uvarint), *int64
// (Varint), *int (Int), *uint16, *uint32, *int32, *bool, *byte, *string,
// *float64, *[]byte (Blob) and []byte (Fixed: an id or hash as r.ID[:]).
// It panics on any other type: a layout is code, not input.
func (f *Fields) Walk(fields ...any) {
	for _, x := range fields {
		switch p := x.(type) {
		case []byte:
			f.Fixed(p)
		case *string:
			f.String(p)
		case *int64:
			f.Varint(p)
		case *uint64:
			f.Uvarint(p)
		case *bool:
			f.Bool(p)
		case *byte:
			f.Byte(p)
		case *int:
			f.Int(p)
		case *uint16:
			f.Uint16(p)
		case *uint32:
			f.Uint32(p)
		case *int32:
			f.Int32(p)
		case *float64:
			f.Float(p)
		case *[]byte:
			f.Blob(p)
		default:
			// A constant message: naming the type would let every field
			// escape, and Walk allocate.
			panic("codec: Walk met a field of a type it does not walk")
		}
	}
}
