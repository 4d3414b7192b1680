package engine

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"backupmon/state"
)

// Loading a snapshot's workspaces: the blobs are read one after another,
// decoded on several cores, and their actors added in the snapshot's order.

// loadWorkersOverride, when above 0, is the number of goroutines Open
// decodes a snapshot and replays the log on, instead of GOMAXPROCS (tests
// compare a serial load with a parallel one).
var loadWorkersOverride atomic.Int32

// loadWorkers returns how many goroutines Open decodes workspaces and
// replays records on.
func loadWorkers() int {
	if n := loadWorkersOverride.Load(); n > 0 {
		return int(n)
	}
	return runtime.GOMAXPROCS(0)
}

// loadSlot is one workspace of a snapshot on its way: its blob, then what
// decoding it gave.
type loadSlot struct {
	i    uint64
	blob []byte
	ws   *state.Workspace
	err  error
	done chan struct{} // closed once ws or err is set
}

// loadWorkspaces reads count workspace blobs of layout version from r,
// decodes them (each with its own indexes) on loadWorkers goroutines and
// adds their actors in the snapshot's order, so that the engine ends as a
// serial load leaves it. At most two blobs per decoder are in memory at
// once, each buffer reused (a decoded workspace keeps none of its blob's
// bytes). It returns the error a serial load would meet first: a workspace
// that cannot be read or decoded stops the load, and the workspaces before
// it are added.
func (e *Engine) loadWorkspaces(r *bufio.Reader, count, version uint64) error {
	workers := loadWorkers()
	window := 2 * workers
	free := make(chan []byte, window) // each buffer back once its blob is decoded
	for range window {
		free <- nil
	}
	work := make(chan *loadSlot)
	order := make(chan *loadSlot, window) // read, in the snapshot's order
	quit := make(chan struct{})           // closed when the adder stops early
	var decoders sync.WaitGroup
	for range workers {
		decoders.Add(1)
		go func() {
			defer decoders.Done()
			for s := range work {
				s.ws, s.err = state.DecodeWorkspace(s.blob, version)
				if s.err != nil {
					s.err = fmt.Errorf("decode workspace %d: %w", s.i, s.err)
				}
				free <- s.blob
				s.blob = nil
				close(s.done)
			}
		}()
	}
	var readErr error
	go func() {
		defer close(order)
		defer close(work)
		readErr = readBlobs(r, count, free, quit, func(s *loadSlot) bool {
			select {
			case order <- s:
			case <-quit:
				return false
			}
			work <- s // a decoder is always coming back for more
			return true
		})
	}()
	var err error
	for s := range order {
		if err != nil {
			continue // the reader stops at quit; drain what it sent
		}
		<-s.done
		if s.err != nil {
			err = s.err
			close(quit)
			continue
		}
		e.addActor(s.ws)
	}
	decoders.Wait()
	if err != nil {
		return err
	}
	return readErr // read after order closed: the reader is done
}

// readBlobs reads count length-prefixed blobs from r, each into a buffer
// taken from free, and hands each to send as a slot; it stops early,
// returning nil, when quit closes or send refuses.
func readBlobs(r *bufio.Reader, count uint64, free chan []byte, quit chan struct{}, send func(*loadSlot) bool) error {
	for i := uint64(0); i < count; i++ {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return fmt.Errorf("read workspace %d: %w", i, err)
		}
		if n > 1<<40 {
			return fmt.Errorf("workspace %d: length %d is not plausible", i, n)
		}
		var blob []byte
		select {
		case blob = <-free:
		case <-quit:
			return nil
		}
		if uint64(cap(blob)) < n {
			blob = make([]byte, n)
		}
		blob = blob[:n]
		if _, err := io.ReadFull(r, blob); err != nil {
			return fmt.Errorf("read workspace %d: %w", i, err)
		}
		if !send(&loadSlot{i: i, blob: blob, done: make(chan struct{})}) {
			return nil
		}
	}
	return nil
}
