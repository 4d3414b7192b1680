package snapshot

import (
	"errors"
	"hash/crc32"
	"io"
)

var errEncoderClosed = errors.New("snapshot writer used after the snapshot was finished")

// encoder is the io.Writer handed to Write's fill function. It cuts the body
// into chunks and writes each one, framed, with a single call to dst.
type encoder struct {
	dst       io.Writer
	crc       uint32 // running crc of everything written so far
	chunkSize int
	buf       []byte // frame head followed by up to chunkSize bytes of data
	n         int    // data bytes in buf
	total     uint64
	chunks    uint64
	err       error // sticky: the first error, or errEncoderClosed
}

// newEncoder writes h to dst and returns an encoder for the body that
// follows. It fails with dst's error.
func newEncoder(dst io.Writer, h header) (*encoder, error) {
	head, crc := appendHeader(make([]byte, 0, headerSize), h)
	if _, err := dst.Write(head); err != nil {
		return nil, err
	}
	return &encoder{
		dst:       dst,
		crc:       crc,
		chunkSize: int(h.chunkSize),
		buf:       make([]byte, frameHeadSize+int(h.chunkSize)),
	}, nil
}

// Write adds p to the body. It fails with the underlying writer's error,
// after which every call fails the same way.
func (e *encoder) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	written := 0
	for len(p) > 0 {
		c := copy(e.buf[frameHeadSize+e.n:], p)
		e.n += c
		p = p[c:]
		if e.n == e.chunkSize {
			if err := e.flush(); err != nil {
				return written, err
			}
		}
		written += c
	}
	return written, nil
}

// flush writes the buffered data as one chunk.
func (e *encoder) flush() error {
	frame := e.buf[:frameHeadSize+e.n]
	le.PutUint32(frame[0:4], uint32(e.n))
	crc := crc32.Update(e.crc, castagnoli, frame[0:4])
	crc = crc32.Update(crc, castagnoli, frame[frameHeadSize:])
	le.PutUint32(frame[4:8], crc)
	if _, err := e.dst.Write(frame); err != nil {
		e.err = err
		return err
	}
	e.crc = crc
	e.total += uint64(e.n)
	e.chunks++
	e.n = 0
	return nil
}

// close writes the last chunk and the trailer. Later Writes fail. It returns
// the first error the encoder met.
func (e *encoder) close() error {
	if e.err != nil {
		return e.err
	}
	if e.n > 0 {
		if err := e.flush(); err != nil {
			return err
		}
	}
	var t [trailerSize]byte
	le.PutUint32(t[0:4], endMarker)
	le.PutUint64(t[4:12], e.total)
	le.PutUint64(t[12:20], e.chunks)
	le.PutUint32(t[20:24], crc32.Update(e.crc, castagnoli, t[:20]))
	if _, err := e.dst.Write(t[:]); err != nil {
		e.err = err
		return err
	}
	e.err = errEncoderClosed
	return nil
}

// encode writes a whole snapshot with header h and fill's body to dst. It
// returns fill's error as is, or dst's.
func encode(dst io.Writer, h header, fill func(w io.Writer) error) error {
	e, err := newEncoder(dst, h)
	if err != nil {
		return err
	}
	if err := fill(e); err != nil {
		return err
	}
	return e.close()
}
