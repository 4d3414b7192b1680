// Package jsonx is JSON in and out: the one door to the JSON library
// (goccy/go-json), through which every other package marshals and
// unmarshals (TestOneDoor fails on any other import of a JSON library
// outside tests), and the hand-written appenders of the hot paths.
package jsonx

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	gojson "github.com/goccy/go-json"
)

// RawMessage is raw encoded JSON, kept undecoded.
type RawMessage = gojson.RawMessage

// Marshal returns the JSON encoding of v, or an error if v cannot be encoded.
// Characters such as & < > are written as they are: responses are JSON, not
// HTML. (gojson.MarshalNoEscape, used here before, is about heap escape, not
// HTML escaping: it wrote \u003c for <.)
func Marshal(v any) ([]byte, error) { return gojson.MarshalWithOption(v, noHTMLEscape) }

var noHTMLEscape = gojson.DisableHTMLEscape()

// Unmarshal decodes data into v. It returns an error for invalid JSON or a
// value that does not fit v; a panic inside the library is turned into an
// error so that odd input can never take the process down.
func Unmarshal(data []byte, v any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("jsonx: decoder panic: %v", p)
		}
	}()
	return gojson.Unmarshal(data, v)
}

// Valid reports whether data is one valid JSON value.
func Valid(data []byte) bool { return gojson.Valid(data) }

// ErrTrailing is UnmarshalStrict's error for text after the one value.
var ErrTrailing = errors.New("text after the JSON object")

// UnmarshalStrict decodes data, one JSON value with nothing but white
// space after it, into v, refusing object members v has no field for
// (input from outside whose every member must mean something: a parsing
// rule, a model's answer). It returns the decoder's error (naming an
// unknown member), or one for text after the value; a panic inside the
// library is an error, as in Unmarshal.
func UnmarshalStrict(data []byte, v any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("jsonx: decoder panic: %v", p)
		}
	}()
	d := gojson.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return ErrTrailing
	}
	if _, err := d.Token(); err != io.EOF {
		return ErrTrailing
	}
	return nil
}
