package state

import (
	"bytes"
	"math"
	"reflect"
	"testing"
)

// lastType is the highest record type number in the registry.
var lastType = func() byte {
	types := Types()
	return types[len(types)-1]
}()

// filler hands out bytes from a fuzz input, over and over, to fill a record.
type filler struct {
	src  []byte
	i    int
	text string
}

func (f *filler) byte() byte {
	if len(f.src) == 0 {
		f.i++
		return byte(f.i*37 + 1)
	}
	b := f.src[f.i%len(f.src)]
	f.i++
	return b
}

func (f *filler) uint64() uint64 {
	var v uint64
	for range 8 {
		v = v<<8 | uint64(f.byte())
	}
	return v
}

// fill sets every field of the struct v points to (embedded Header
// included) from the filler. With nonZero, no field is left at its zero
// value, so a field the encoding forgets cannot round-trip by luck.
func (f *filler) fill(v reflect.Value, nonZero bool) {
	switch v.Kind() {
	case reflect.Pointer:
		f.fill(v.Elem(), nonZero)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() { // the header's binding is not data
				f.fill(v.Field(i), nonZero)
			}
		}
	case reflect.Slice:
		n := int(f.byte() % 4)
		if nonZero && n == 0 {
			n = 1
		}
		if n > 0 {
			v.Set(reflect.MakeSlice(v.Type(), n, n))
			for i := range n {
				f.fill(v.Index(i), nonZero)
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			f.fill(v.Index(i), false)
		}
		if nonZero && v.Len() > 0 && v.Index(0).Uint() == 0 {
			v.Index(0).SetUint(1)
		}
	case reflect.String:
		s := f.text
		if n := int(f.byte()); n%4 == 0 || s == "" {
			s = string(f.src[:min(len(f.src), n)])
		}
		if nonZero && s == "" {
			s = "x"
		}
		v.SetString(s)
	case reflect.Bool:
		v.SetBool(nonZero || f.byte()&1 == 1)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u := f.uint64()
		v.SetUint(u)
		if nonZero && v.Uint() == 0 {
			v.SetUint(1)
		}
	case reflect.Int64, reflect.Int:
		var n int64
		switch f.byte() % 4 {
		case 0:
			n = math.MinInt64
		case 1:
			n = math.MaxInt64
		case 2:
			n = int64(int8(f.byte()))
		default:
			n = int64(f.uint64())
		}
		if nonZero && n == 0 {
			n = -1
		}
		v.SetInt(n)
	case reflect.Float64:
		x := math.Float64frombits(f.uint64())
		if nonZero && x == 0 {
			x = 95.5
		}
		v.SetFloat(x)
	default:
		panic("filler: unhandled kind " + v.Kind().String())
	}
}

// hasNaN reports whether a record holds a NaN (which DeepEqual never finds
// equal to itself).
func hasNaN(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer:
		return hasNaN(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if hasNaN(v.Field(i)) {
				return true
			}
		}
	case reflect.Float64:
		return math.IsNaN(v.Float())
	}
	return false
}

// roundTrip encodes rec, decodes it and checks it comes back the same.
func roundTrip(t *testing.T, rec Record) {
	t.Helper()
	payload := rec.AppendPayload(nil)
	got, err := Decode(rec.Type(), payload)
	if err != nil {
		t.Fatalf("decode %T %+v: %v", rec, rec, err)
	}
	if got.Type() != rec.Type() || reflect.TypeOf(got) != reflect.TypeOf(rec) {
		t.Fatalf("decode type %d gave %T", rec.Type(), got)
	}
	if again := got.AppendPayload(nil); !bytes.Equal(again, payload) {
		t.Fatalf("%T: encode, decode, encode differs:\n %x\n %x", rec, payload, again)
	}
	if !hasNaN(reflect.ValueOf(rec)) && !reflect.DeepEqual(got, rec) {
		t.Fatalf("%T did not round trip:\n got  %+v\n want %+v", rec, got, rec)
	}
	// Appending to a buffer that holds something keeps it in front.
	prefixed := rec.AppendPayload([]byte("head"))
	if !bytes.Equal(prefixed[4:], payload) || string(prefixed[:4]) != "head" {
		t.Fatalf("%T: AppendPayload does not append", rec)
	}
	// Every strict prefix fails to decode, and trailing bytes fail too.
	for cut := range len(payload) {
		if _, err := Decode(rec.Type(), payload[:cut]); err == nil {
			t.Fatalf("%T: a cut at %d of %d bytes decoded", rec, cut, len(payload))
		}
	}
	if _, err := Decode(rec.Type(), append(bytes.Clone(payload), 0)); err == nil {
		t.Fatalf("%T: a trailing byte decoded", rec)
	}
}

// FuzzDecodeRecord: Decode never panics on any type and payload, what it
// decodes re-encodes to something that decodes the same, and a record of
// every type built from the fuzz input round-trips.
func FuzzDecodeRecord(f *testing.F) {
	for _, typ := range Types() {
		rec := New(typ)
		fl := &filler{src: []byte{typ, 1, 2, 3}, text: "seed"}
		fl.fill(reflect.ValueOf(rec), true)
		f.Add(typ, rec.AppendPayload(nil), "seed")
		f.Add(typ, []byte{}, "")
	}
	f.Add(byte(0), []byte{1, 2, 3}, "x")
	f.Add(byte(200), []byte{}, "")
	f.Add(TypeJobUpdated, append(make([]byte, 17), 0xff, 0xff, 0xff, 0x01), "")
	f.Add(TypeReport, bytes.Repeat([]byte{0xff}, 64), "\xff")
	f.Fuzz(func(t *testing.T, typ byte, payload []byte, text string) {
		rec, err := Decode(typ, payload)
		if err == nil {
			if rec == nil || rec.Type() != typ {
				t.Fatalf("Decode(%d) gave %T", typ, rec)
			}
			again, err := Decode(typ, rec.AppendPayload(nil))
			if err != nil {
				t.Fatalf("Decode(%d, %x) = %+v, which re-encodes to something Decode refuses: %v", typ, payload, rec, err)
			}
			if !hasNaN(reflect.ValueOf(rec)) && !reflect.DeepEqual(again, rec) {
				t.Fatalf("Decode(%d, %x): %+v, then %+v", typ, payload, rec, again)
			}
		} else if rec != nil {
			t.Fatalf("Decode(%d) returned %T with error %v", typ, rec, err)
		}
		if New(typ) == nil && err == nil {
			t.Fatalf("Decode accepted unknown type %d", typ)
		}

		// Round trip of a record built from the input.
		types := Types()
		built := New(types[int(typ)%len(types)])
		fl := &filler{src: payload, text: text}
		fl.fill(reflect.ValueOf(built), false)
		roundTrip(t, built)
	})
}

// TestRecordRoundTrip: every record type, with every field set, comes back
// as it went in; a field left out of AppendPayload or Decode fails here.
func TestRecordRoundTrip(t *testing.T) {
	for _, typ := range Types() {
		for seed := range 20 {
			rec := New(typ)
			if rec.Type() != typ {
				t.Fatalf("record type %d says %d", typ, rec.Type())
			}
			fl := &filler{src: []byte{byte(seed), typ, 0x80, 0x7f, byte(seed * 31)}, text: "name é \x00 \xff"}
			fl.fill(reflect.ValueOf(rec), true)
			roundTrip(t, rec)
		}
		// The zero record round-trips too.
		roundTrip(t, New(typ))
	}
	if _, err := Decode(0, nil); err == nil {
		t.Error("type 0 decoded")
	}
	if _, err := Decode(lastType+1, nil); err == nil {
		t.Error("an unknown type decoded")
	}
	// JobUpdated fields beyond 16 bits are refused.
	bad := New(TypeJobUpdated).AppendPayload(nil)
	const at = 16 + 1 + 16                                                        // header (workspace, seq 0), id
	bad = append(bad[:at:at], append([]byte{0x80, 0x80, 0x04}, bad[at+1:]...)...) // Fields = 1<<16
	if _, err := Decode(TypeJobUpdated, bad); err == nil {
		t.Error("JobUpdated with fields 1<<16 decoded")
	}
}

// TestRegistry: each registry line names a record type of its own, and a
// record made or decoded by number says that number.
func TestRegistry(t *testing.T) {
	if n := len(Types()); len(typeOf) != n {
		t.Fatalf("the registry has %d lines but %d record types: a type is listed twice", n, len(typeOf))
	}
	for _, typ := range Types() {
		if got := New(typ).Type(); got != typ {
			t.Errorf("New(%d).Type() = %d", typ, got)
		}
	}
}
