package snapshot

import (
	"fmt"
	"hash/crc32"
	"io"
)

// reader yields a snapshot's body from the raw file bytes in src, checking
// the header, every chunk and the trailer as it goes. It reads the header on
// the first Read, so every problem with the file surfaces through Read.
type reader struct {
	src     io.Reader
	wantLSN uint64 // LSN the header must carry, if check is set
	check   bool

	started bool
	hdr     header
	crc     uint32 // running crc of the file so far
	pos     int64  // file offset of the next byte from src

	buf      []byte // current chunk; buf[off:] is verified and unread
	off      int
	total    uint64
	chunks   uint64
	lastSeen bool // a short chunk was read: only the trailer may follow

	scratch [headerSize]byte
	err     error // sticky; io.EOF once the whole file checked out
}

// newReader returns a reader of the snapshot file bytes in src.
func newReader(src io.Reader) *reader {
	return &reader{src: src}
}

// newReaderFor is newReader that also requires the header to carry lsn.
func newReaderFor(src io.Reader, lsn uint64) *reader {
	return &reader{src: src, wantLSN: lsn, check: true}
}

// Read copies verified body bytes into p. It returns io.EOF only after the
// trailer matched and the file ended right after it; damage, truncation or
// extra bytes give an error wrapping ErrCorrupt, and a failing src gives its
// error. Errors are sticky.
func (r *reader) Read(p []byte) (int, error) {
	for r.off == len(r.buf) {
		if r.err != nil {
			return 0, r.err
		}
		if len(p) == 0 {
			return 0, nil
		}
		r.err = r.next()
	}
	n := copy(p, r.buf[r.off:])
	r.off += n
	return n, nil
}

// next reads the header if not yet done, then the next chunk into buf, or
// the trailer, in which case it returns io.EOF when all is well.
func (r *reader) next() error {
	if !r.started {
		r.started = true
		return r.readHeader()
	}
	frame := r.scratch[:frameHeadSize]
	if err := r.readFull(frame); err != nil {
		if err == io.EOF {
			return fmt.Errorf("%w: file ends at offset %d without a trailer", ErrCorrupt, r.pos)
		}
		return r.failed(err, "chunk header")
	}
	length := le.Uint32(frame[0:4])
	if length == endMarker {
		return r.readTrailer()
	}
	at := r.pos - frameHeadSize
	switch {
	case r.lastSeen:
		return fmt.Errorf("%w: chunk %d at offset %d follows a short chunk", ErrCorrupt, r.chunks, at)
	case length == 0 || length > r.hdr.chunkSize:
		return fmt.Errorf("%w: chunk %d at offset %d: bad length %d", ErrCorrupt, r.chunks, at, length)
	}
	r.lastSeen = length < r.hdr.chunkSize
	want := le.Uint32(frame[4:8])
	crc := crc32.Update(r.crc, castagnoli, frame[0:4])
	if cap(r.buf) == 0 {
		r.buf = make([]byte, 0, r.hdr.chunkSize)
	}
	data := r.buf[:length]
	if err := r.fill(data, "chunk"); err != nil {
		return err
	}
	crc = crc32.Update(crc, castagnoli, data)
	if crc != want {
		return fmt.Errorf("%w: chunk %d at offset %d: checksum mismatch", ErrCorrupt, r.chunks, at)
	}
	r.crc = crc
	r.buf, r.off = data, 0
	r.total += uint64(length)
	r.chunks++
	return nil
}

func (r *reader) readHeader() error {
	if err := r.fill(r.scratch[:headerSize], "header"); err != nil {
		return err
	}
	h, crc, err := parseHeader(&r.scratch)
	if err != nil {
		return err
	}
	if r.check && h.lsn != r.wantLSN {
		return fmt.Errorf("%w: header has LSN %d, want %d", ErrCorrupt, h.lsn, r.wantLSN)
	}
	r.hdr, r.crc = h, crc
	return nil
}

// readTrailer checks the trailer whose first frameHeadSize bytes are in
// scratch, and that nothing follows it. It returns io.EOF if all is well.
func (r *reader) readTrailer() error {
	at := r.pos - frameHeadSize
	t := r.scratch[:trailerSize]
	if err := r.fill(t[frameHeadSize:], "trailer"); err != nil {
		return err
	}
	if crc := crc32.Update(r.crc, castagnoli, t[:20]); crc != le.Uint32(t[20:24]) {
		return fmt.Errorf("%w: trailer at offset %d: checksum mismatch", ErrCorrupt, at)
	}
	if total, chunks := le.Uint64(t[4:12]), le.Uint64(t[12:20]); total != r.total || chunks != r.chunks {
		return fmt.Errorf("%w: trailer says %d bytes in %d chunks, read %d in %d",
			ErrCorrupt, total, chunks, r.total, r.chunks)
	}
	switch n, err := io.ReadFull(r.src, r.scratch[:1]); {
	case n > 0:
		return fmt.Errorf("%w: extra bytes after trailer at offset %d", ErrCorrupt, r.pos)
	case err != io.EOF:
		return fmt.Errorf("read snapshot: %w", err)
	}
	return io.EOF
}

// fill reads exactly len(b) bytes of the named part of the file. A short
// file gives an error wrapping ErrCorrupt.
func (r *reader) fill(b []byte, what string) error {
	if err := r.readFull(b); err != nil {
		return r.failed(err, what)
	}
	return nil
}

// readFull is io.ReadFull from src that keeps pos up to date.
func (r *reader) readFull(b []byte) error {
	n, err := io.ReadFull(r.src, b)
	r.pos += int64(n)
	return err
}

// failed turns an error from readFull while reading the named part into the
// reader's error.
func (r *reader) failed(err error, what string) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%w: file ends inside %s at offset %d", ErrCorrupt, what, r.pos)
	}
	return fmt.Errorf("read snapshot %s: %w", what, err)
}
