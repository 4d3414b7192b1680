// Package wal holds the write-ahead log shared by the whole engine: records
// go in through one committer goroutine that groups them into a single write
// and fsync, and come back out through Replay when the process starts.
//
// The segment files are managed by github.com/tidwall/wal, which stores each
// entry as a uvarint length and the entry's bytes. Every entry this package
// writes is a frame:
//
//	[crc32c(type + payload), 4 bytes little-endian][type byte][payload]
//
// so that damage is detected on the way back in. Open repairs a torn tail
// (a last segment that ends in a partial, garbage or zeroed entry) and refuses
// to start when damage is followed by valid records.
//
// An LSN (log sequence number) is tidwall's entry index: it starts at 1 and
// grows by one per record.
package wal
