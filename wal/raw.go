package wal

// Raw is a record given as its type and payload bytes, appended as they
// are: a record copied from another log, or one a test makes up.
type Raw struct {
	Typ     byte
	Payload []byte
}

// Type returns r's type byte.
func (r *Raw) Type() byte { return r.Typ }

// AppendPayload appends r's payload to b and returns the extended slice.
func (r *Raw) AppendPayload(b []byte) []byte { return append(b, r.Payload...) }
