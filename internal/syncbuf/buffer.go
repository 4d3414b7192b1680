// Package syncbuf is a bytes.Buffer that goroutines may write while another
// reads it: the text log of an engine or a server under test.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer collects what is written to it; its zero value is empty and ready.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
