package engine

import "backupmon/wal"

// Log is what the engine needs of its write-ahead log: records appended in
// order with group commit, each acknowledged once durable; replayed in order
// at start-up; and dropped before the position the oldest snapshot kept
// starts from. It stores bytes: a record is a type and a payload
// (state.Record encodes itself). *wal.Log, on the local disk, is the one a
// single node uses.
type Log interface {
	// Replay calls fn for every record from position from (0: the first
	// held) to the last, in order, before Start.
	Replay(from uint64, fn func(lsn uint64, typ byte, payload []byte) error) error
	// Start begins taking records; those submitted before wait.
	Start()
	// Submit queues rec; done(lsn, nil) is called once it is durable, in
	// position order, or with an error when it never will be. A nil rec is
	// a barrier: done is called once every record before it is durable.
	Submit(rec wal.Record, done func(lsn uint64, err error))
	// NextLSN returns the position the next record submitted will get.
	NextLSN() uint64
	// FirstLSN returns the first position still held.
	FirstLSN() uint64
	// Written returns the bytes made durable since the log was opened.
	Written() uint64
	// TruncateFront drops every record before lsn.
	TruncateFront(lsn uint64) error
	// Close makes what was submitted durable and releases the log.
	Close() error
}

var _ Log = (*wal.Log)(nil)
