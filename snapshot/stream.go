package snapshot

import (
	"fmt"
	"io"
	"time"
)

// Encode streams fill's bytes to dst as a whole snapshot for lsn (header,
// checked chunks, trailer): the file format, for a store that is not a
// directory. It returns fill's error or dst's, wrapped.
func Encode(dst io.Writer, lsn uint64, fill func(w io.Writer) error) error {
	h := header{chunkSize: defaultChunkSize, lsn: lsn, created: time.Now().UnixMilli()}
	if err := encode(dst, h, fill); err != nil {
		return fmt.Errorf("encode snapshot %d: %w", lsn, err)
	}
	return nil
}

// Decode runs fn on the snapshot for lsn that src holds, with a reader of
// its body that checks each chunk before handing out its bytes, and makes
// sure the whole snapshot was read and checked. It returns fn's error, or
// an error wrapping ErrCorrupt for damage, truncation or extra bytes.
func Decode(src io.Reader, lsn uint64, fn func(lsn uint64, r io.Reader) error) error {
	r := newReaderFor(src, lsn)
	if err := fn(lsn, r); err != nil {
		return err
	}
	// fn may have stopped early, or dropped an error from r: read on.
	if _, err := io.Copy(io.Discard, r); err != nil {
		return fmt.Errorf("checking the rest after fn returned: %w", err)
	}
	return nil
}
