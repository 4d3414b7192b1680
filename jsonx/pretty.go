package jsonx

import (
	"bytes"

	gojson "github.com/goccy/go-json"
)

// Pretty returns src indented as encoding/json's Indent does, two spaces a
// level and no prefix, with the white space after the value kept; it
// returns src itself when src is not one valid JSON value, so that what
// cannot be read is still shown as it came.
func Pretty(src []byte) []byte {
	var b bytes.Buffer
	if err := gojson.Indent(&b, src, "", "  "); err != nil {
		return src
	}
	return b.Bytes()
}
