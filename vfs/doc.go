// Package vfs is the file system the write-ahead log and the snapshots go
// through: the operating system's (OS) in production, and in tests Faulty,
// which records every operation and makes chosen ones fail. WriteFile, on
// it, writes a small file whole and durably (the data directory's FORMAT,
// the mail store's messages).
package vfs
