//go:build race

package mailparse

// hostileScale shrinks TestHostileMail's inputs under the race detector,
// which runs the parsers ten times slower; the bounds checked per byte
// stay the same.
const hostileScale = 8
