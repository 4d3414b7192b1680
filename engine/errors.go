package engine

import "fmt"

// ErrorKind says which contract error an engine error maps to.
type ErrorKind uint8

// Kinds of engine errors.
const (
	KindInvalid  ErrorKind = iota + 1 // a field of the request is wrong (400)
	KindNotFound                      // the thing named does not exist (404)
	KindConflict                      // the change does not fit the current state (409)
)

// Error is a refused command: its kind, the field at fault (for KindInvalid)
// and a message meant for the person who sent the request.
type Error struct {
	Kind    ErrorKind
	Field   string
	Message string
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

func invalid(field, format string, args ...any) *Error {
	return &Error{Kind: KindInvalid, Field: field, Message: fmt.Sprintf(format, args...)}
}

func notFound(what string) *Error {
	return &Error{Kind: KindNotFound, Message: what + " not found"}
}

func conflict(format string, args ...any) *Error {
	return &Error{Kind: KindConflict, Message: fmt.Sprintf(format, args...)}
}

// Opt is an optional input field: Set when the request named it, Null when
// it named it as null.
type Opt[T any] struct {
	Set  bool
	Null bool
	V    T
}

// Some returns a set, non-null Opt holding v.
func Some[T any](v T) Opt[T] { return Opt[T]{Set: true, V: v} }
