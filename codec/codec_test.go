package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// value is one encoded value of a round trip: its kind and what was written.
type value struct {
	kind byte
	u    uint64
	i    int64
	b    bool
	s    string
	raw  []byte
	f    float64
}

const kinds = 8

// appendValue writes v with the Append function of its kind.
func appendValue(dst []byte, v value) []byte {
	switch v.kind {
	case 0:
		return AppendUvarint(dst, v.u)
	case 1:
		return AppendVarint(dst, v.i)
	case 2:
		return AppendVarint(dst, v.i) // read back with Int
	case 3:
		return AppendBool(dst, v.b)
	case 4:
		return append(dst, byte(v.u))
	case 5:
		return AppendString(dst, v.s)
	case 6:
		return AppendBytes(dst, v.raw)
	case 7:
		dst = AppendFloat(dst, v.f)
		return AppendFixed(dst, v.raw)
	}
	panic("unknown kind")
}

// readValue reads a value of v's kind and reports whether it equals v.
func readValue(r *Reader, v value) bool {
	switch v.kind {
	case 0:
		return r.Uvarint() == v.u
	case 1:
		return r.Varint() == v.i
	case 2:
		return int64(r.Int()) == v.i
	case 3:
		return r.Bool() == v.b
	case 4:
		return r.Byte() == byte(v.u)
	case 5:
		return r.String() == v.s
	case 6:
		got := r.Bytes()
		if len(v.raw) == 0 {
			return got == nil
		}
		return bytes.Equal(got, v.raw)
	case 7:
		f := r.Float()
		fixed := make([]byte, len(v.raw))
		r.Fixed(fixed)
		return math.Float64bits(f) == math.Float64bits(v.f) && bytes.Equal(fixed, v.raw)
	}
	panic("unknown kind")
}

// values turns fuzz input into a list of values to encode: each value takes
// a kind byte, then what it needs from the rest of the input.
func values(src []byte) []value {
	var list []value
	take := func(n int) []byte {
		if n > len(src) {
			n = len(src)
		}
		b := src[:n]
		src = src[n:]
		return b
	}
	u64 := func() uint64 {
		var buf [8]byte
		copy(buf[:], take(8))
		return binary.LittleEndian.Uint64(buf[:])
	}
	for len(src) > 0 {
		v := value{kind: take(1)[0] % kinds}
		switch v.kind {
		case 0, 4:
			v.u = u64()
		case 1, 2:
			v.i = int64(u64())
		case 3:
			v.b = u64()&1 == 1
		case 5, 6:
			n := 0
			if len(src) > 0 {
				n = int(take(1)[0])
			}
			v.raw = bytes.Clone(take(n))
			v.s = string(v.raw)
		case 7:
			v.f = math.Float64frombits(u64())
			n := 0
			if len(src) > 0 {
				n = int(take(1)[0] % 33)
			}
			v.raw = bytes.Clone(take(n))
		}
		list = append(list, v)
	}
	return list
}

// readAny reads input with the Reader method op names and checks the
// Reader's invariants: a failed Reader returns zero values and keeps its
// first error; Len never goes up or below zero.
func readAny(t *testing.T, r *Reader, op byte) {
	t.Helper()
	before, errBefore := r.Len(), r.Err()
	var zero bool
	switch op % 12 {
	case 0:
		zero = r.Uvarint() == 0
	case 1:
		zero = r.Varint() == 0
	case 2:
		zero = r.Int() == 0
	case 3:
		zero = !r.Bool()
	case 4:
		zero = r.Byte() == 0
	case 5:
		s := r.String()
		zero = s == ""
		if len(s) > before {
			t.Fatalf("String returned %d bytes with %d left", len(s), before)
		}
	case 6:
		b := r.Bytes()
		zero = b == nil
		if len(b) > before {
			t.Fatalf("Bytes returned %d bytes with %d left", len(b), before)
		}
	case 7:
		dst := make([]byte, int(op>>4))
		r.Fixed(dst)
		zero = bytes.Equal(dst, make([]byte, len(dst)))
	case 8:
		zero = math.Float64bits(r.Float()) == 0
	case 9:
		_ = r.Done()
		zero = true
	case 10:
		r.Fail(errors.New("fuzz failure"))
		zero = true
	case 11:
		zero = true
		_ = r.Len()
	}
	if r.Len() < 0 || r.Len() > before {
		t.Fatalf("Len went from %d to %d", before, r.Len())
	}
	if errBefore != nil {
		if r.Err() != errBefore {
			t.Fatalf("first error %v replaced by %v", errBefore, r.Err())
		}
		if !zero || r.Len() != before {
			t.Fatalf("a failed Reader read a value (op %d)", op%12)
		}
	}
	if r.Err() != nil && !errors.Is(r.Err(), ErrShort) && !errors.Is(r.Err(), ErrInvalid) && r.Err().Error() != "fuzz failure" {
		t.Fatalf("error %v wraps neither ErrShort nor ErrInvalid", r.Err())
	}
}

// FuzzReader reads arbitrary input with every Reader method (in the order
// ops gives) without panicking, and round-trips values built from the input
// through the Append functions and the Reader.
func FuzzReader(f *testing.F) {
	f.Add([]byte{}, []byte{})
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, []byte{0x80})
	f.Add([]byte{5, 5, 6}, []byte{3, 'a', 'b', 'c', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{0, 1, 2}, bytes.Repeat([]byte{0xff}, 11))
	f.Add([]byte{2}, binary.AppendVarint(nil, math.MinInt64))
	f.Add([]byte{5}, binary.AppendUvarint(nil, maxLen+1))
	f.Add([]byte{5}, binary.AppendUvarint(nil, math.MaxUint64))
	f.Add([]byte{3, 3}, []byte{1, 2})
	f.Add([]byte{0x87, 8, 9}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Add([]byte{10, 0, 9}, []byte{1})
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7}, []byte{5, 3, 'x', 'y', 'z', 7, 1, 2, 3, 4, 5, 6, 7, 8, 4, 'a', 'b', 'c', 'd'})
	f.Fuzz(func(t *testing.T, ops, input []byte) {
		// Any input, any order of reads: no panic, invariants hold.
		r := NewReader(input)
		for _, op := range ops {
			readAny(t, r, op)
		}
		// Reset clears the error and starts over.
		r.Reset(input)
		if r.Err() != nil || r.Len() != len(input) {
			t.Fatalf("Reset: err %v, len %d of %d", r.Err(), r.Len(), len(input))
		}

		// Round trip of values built from the input (ops chooses nothing here).
		list := values(input)
		var enc []byte
		for _, v := range list {
			enc = appendValue(enc, v)
		}
		r = NewReader(enc)
		for i, v := range list {
			if !readValue(r, v) {
				t.Fatalf("value %d (%+v) did not round trip: err %v", i, v, r.Err())
			}
		}
		if err := r.Done(); err != nil {
			t.Fatalf("Done after reading every value: %v", err)
		}
		// Strings and bytes are copies: changing the input later does not
		// change what was read.
		r = NewReader(enc)
		got := make([]value, len(list))
		for i, v := range list {
			got[i] = v
			switch v.kind {
			case 5:
				got[i].s = r.String()
			case 6:
				got[i].raw = r.Bytes()
			default:
				readValue(r, v)
			}
		}
		for i := range enc {
			enc[i] ^= 0xff
		}
		for i, v := range list {
			if v.kind == 5 && got[i].s != v.s || v.kind == 6 && !bytes.Equal(got[i].raw, v.raw) {
				t.Fatalf("value %d shares memory with the input", i)
			}
		}
		for i := range enc {
			enc[i] ^= 0xff
		}
		// Every strict prefix of a non-empty encoding fails (each value
		// needs its bytes), and never panics; trailing bytes fail Done.
		if len(list) > 0 {
			cut := len(enc) - 1
			if len(ops) > 0 {
				cut = int(ops[0]) % len(enc)
			}
			r = NewReader(enc[:cut])
			for _, v := range list {
				readValue(r, v)
			}
			if r.Done() == nil {
				t.Fatalf("a cut at %d of %d bytes read without error", cut, len(enc))
			}
		}
		r = NewReader(append(bytes.Clone(enc), 0))
		for _, v := range list {
			readValue(r, v)
		}
		if err := r.Done(); !errors.Is(err, ErrInvalid) {
			t.Fatalf("a trailing byte: Done = %v, want ErrInvalid", err)
		}
	})
}

func TestReaderTable(t *testing.T) {
	// Overlong varint (11 bytes of continuation) is invalid, not short.
	r := NewReader(bytes.Repeat([]byte{0xff}, 11))
	r.Uvarint()
	if !errors.Is(r.Err(), ErrInvalid) {
		t.Errorf("overlong uvarint: %v, want ErrInvalid", r.Err())
	}
	// A length beyond the input is short, without allocating.
	r = NewReader(binary.AppendUvarint(nil, math.MaxUint64))
	if s := r.String(); s != "" || !errors.Is(r.Err(), ErrShort) {
		t.Errorf("huge length: %q, %v", s, r.Err())
	}
	// A length beyond maxLen is refused even when the bytes are there.
	big := binary.AppendUvarint(nil, maxLen+1)
	big = append(big, make([]byte, maxLen+1)...)
	r = NewReader(big)
	if b := r.Bytes(); b != nil || r.Err() == nil {
		t.Errorf("length over maxLen: %d bytes, %v", len(b), r.Err())
	}
	// Bool refuses anything but 0 and 1.
	r = NewReader([]byte{2})
	if r.Bool() || !errors.Is(r.Err(), ErrInvalid) {
		t.Errorf("bool 2: %v", r.Err())
	}
	// Int refuses nothing on 64-bit platforms; MinInt64 round trips.
	r = NewReader(AppendVarint(nil, math.MinInt64))
	if v := r.Int(); int64(v) != math.MinInt64 || r.Done() != nil {
		t.Errorf("MinInt64: %d, %v", v, r.Err())
	}
	// Floats keep their bits, NaN payloads and negative zero included.
	for _, f := range []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), math.Float64frombits(0x7ff0000000000001), math.SmallestNonzeroFloat64, math.MaxFloat64} {
		r = NewReader(AppendFloat(nil, f))
		if got := r.Float(); math.Float64bits(got) != math.Float64bits(f) || r.Done() != nil {
			t.Errorf("float %x: got %x, %v", math.Float64bits(f), math.Float64bits(got), r.Err())
		}
	}
	// Empty input: every read is short.
	for _, op := range []byte{0, 1, 2, 3, 4, 5, 6, 7 + 12, 8} { // 19 % 12 == 7: Fixed of 19>>4 == 1 byte
		r = NewReader(nil)
		readAny(t, r, op)
		if !errors.Is(r.Err(), ErrShort) {
			t.Errorf("op %d on empty input: no error", op)
		}
	}
}
