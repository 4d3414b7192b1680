// Package snapshot writes, finds and loads snapshot files of the engine's
// state, atomically and with checksums.
//
// A snapshot holds the engine's state as opaque bytes, taken at a log
// position (LSN). Each one lives in its own file named after its LSN as 20
// decimal digits, "00000000000000000042.snap", so names sort by LSN. Write
// builds the file under a temporary name ending in ".tmp", syncs it and
// renames it into place, so a snapshot file either is complete or does not
// exist. Load tries the newest snapshot first and falls back to older ones
// when one is damaged or rejected; Prune keeps the newest few.
//
// # File format
//
// All integers are little endian.
//
//	header   magic "BMSNAP01" [8] | version u32 | chunk size u32 |
//	         lsn u64 | created unix ms i64 | crc u32              (36 bytes)
//	chunk    length u32 | crc u32 | data [length]                 (repeated)
//	trailer  0xFFFFFFFF u32 | body length u64 | chunk count u64 |
//	         crc u32                                              (24 bytes)
//
// The body is cut into chunks of exactly the header's chunk size, except the
// last, which may be shorter; an empty body has no chunks. A length field of
// 0xFFFFFFFF marks the trailer instead of a chunk.
//
// The checksums are CRC-32C (Castagnoli) and chained: every crc field holds
// the CRC of all the file's bytes from the start up to the end of the item
// it closes, leaving out the crc fields themselves. A chunk's crc covers its
// length and its data. Chaining ties each chunk to its header and its place
// in the file, and the trailer's counts catch a file cut at a chunk boundary.
// A given LSN, creation time, chunk size and body have exactly one valid
// encoding.
//
// Readers hand out a chunk's bytes only after its crc matched, and report
// io.EOF only once the trailer matched and nothing follows it. Bytes of
// earlier chunks are handed out before later chunks are checked, so a
// consumer must be ready to discard what it built when a read fails.
package snapshot
