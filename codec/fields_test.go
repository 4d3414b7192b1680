package codec

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

type sample struct {
	U    uint64
	V    int64
	I    int
	U16  uint16
	U32  uint32
	I32  int32
	B    bool
	Y    byte
	S    string
	ID   [16]byte
	F    float64
	List []string
}

func (s *sample) fields(f *Fields) {
	s.scalars(f)
	Slice(f, &s.List, 1, func(f *Fields, item *string) { f.String(item) })
}

// scalars walks every field but the list, with the one-field methods.
func (s *sample) scalars(f *Fields) {
	f.Uvarint(&s.U)
	f.Varint(&s.V)
	f.Int(&s.I)
	f.Uint16(&s.U16)
	f.Uint32(&s.U32)
	f.Int32(&s.I32)
	f.Bool(&s.B)
	f.Byte(&s.Y)
	f.String(&s.S)
	f.Fixed(s.ID[:])
	f.Float(&s.F)
}

// TestFieldsRoundTrip: one walk writes what the Append functions write, and
// reads it back into an equal value.
func TestFieldsRoundTrip(t *testing.T) {
	in := sample{U: 1 << 40, V: -12345, I: 77, U16: 65535, U32: 1 << 31, I32: -1 << 31, B: true, Y: 9, S: "héllo",
		ID: [16]byte{1, 2, 3}, F: 99.5, List: []string{"a", "", "ccc"}}
	enc := Encoder([]byte("prefix"))
	in.fields(enc)
	want := []byte("prefix")
	want = AppendUvarint(want, in.U)
	want = AppendVarint(want, in.V)
	want = AppendVarint(want, int64(in.I))
	want = AppendUvarint(want, uint64(in.U16))
	want = AppendUvarint(want, uint64(in.U32))
	want = AppendVarint(want, int64(in.I32))
	want = AppendBool(want, in.B)
	want = append(want, in.Y)
	want = AppendString(want, in.S)
	want = AppendFixed(want, in.ID[:])
	want = AppendFloat(want, in.F)
	want = AppendUvarint(want, 3)
	for _, s := range in.List {
		want = AppendString(want, s)
	}
	if !bytes.Equal(enc.Bytes(), want) {
		t.Fatalf("encoded\n%x\nwant\n%x", enc.Bytes(), want)
	}
	var out sample
	dec := Decoder(enc.Bytes()[len("prefix"):])
	out.fields(dec)
	if err := dec.Done(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("decoded %+v, want %+v", out, in)
	}
}

// TestFieldsBounds: a decoder refuses values that do not fit their field
// and counts the input cannot hold.
func TestFieldsBounds(t *testing.T) {
	for _, tc := range []struct {
		what string
		in   []byte
		walk func(f *Fields)
		want error
	}{
		{"uint16", AppendUvarint(nil, 1<<16), func(f *Fields) { var v uint16; f.Uint16(&v) }, ErrInvalid},
		{"uint32", AppendUvarint(nil, 1<<32), func(f *Fields) { var v uint32; f.Uint32(&v) }, ErrInvalid},
		{"int32", AppendVarint(nil, 1<<31), func(f *Fields) { var v int32; f.Int32(&v) }, ErrInvalid},
		{"count", AppendUvarint(nil, 1000), func(f *Fields) {
			var l []string
			Slice(f, &l, 1, func(f *Fields, s *string) { f.String(s) })
		}, ErrShort},
		{"short", []byte{}, func(f *Fields) { var s string; f.String(&s) }, ErrShort},
	} {
		t.Run(tc.what, func(t *testing.T) {
			f := Decoder(tc.in)
			tc.walk(f)
			if err := f.Err(); !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
}

// TestWalk: Walk writes what the one-field methods write, reads it back,
// and does so without allocating.
func TestWalk(t *testing.T) {
	in := sample{U: 7, V: -8, I: 9, U16: 10, U32: 11, I32: -12, B: true, Y: 13, S: "s", ID: [16]byte{14}, F: 1.5}
	one := Encoder(nil)
	in.scalars(one)
	walked := Encoder(nil)
	walked.Walk(&in.U, &in.V, &in.I, &in.U16, &in.U32, &in.I32, &in.B, &in.Y, &in.S, in.ID[:], &in.F)
	if !bytes.Equal(one.Bytes(), walked.Bytes()) {
		t.Fatalf("Walk wrote %x, the methods %x", walked.Bytes(), one.Bytes())
	}
	var out sample
	d := Decoder(walked.Bytes())
	d.Walk(&out.U, &out.V, &out.I, &out.U16, &out.U32, &out.I32, &out.B, &out.Y, &out.S, out.ID[:], &out.F)
	if err := d.Done(); err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("read back %+v (%v), want %+v", out, err, in)
	}
	f := Encoder(make([]byte, 0, 1024))
	if n := testing.AllocsPerRun(100, func() {
		f.ResetEncoder(f.Bytes()[:0])
		f.Walk(&in.U, &in.V, &in.S, in.ID[:], &in.F)
	}); n != 0 {
		t.Fatalf("Walk allocates %v times", n)
	}
}
