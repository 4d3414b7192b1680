//go:build !race

package mailparse

// hostileScale: see race_on_test.go.
const hostileScale = 1
