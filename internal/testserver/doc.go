// Package testserver starts a real backupmon server for black-box tests and
// talks to it over HTTP, for the tests of transport and cmd/backupmon.
//
// Two kinds of server share one client:
//
//   - Start runs the engine and the transport's listeners in the test's own
//     process, on loopback, with a development clock, a fixed admin token and
//     cursor key; Restart opens them again on the same data directory, and
//     Options.FS puts a file system that fails chosen operations under the
//     log and the snapshots.
//   - StartChild runs the backupmon binary (built once per test binary, see
//     Main) as `backupmon serve` on loopback, reads its listener lines, and
//     kills, stops or restarts it.
//
// Both embed a *Client: admin API calls, reports, REST reads, clock moves
// and /metrics, each failing the test it holds (Client.T) or, in the
// methods whose names say Send or Call, returning an error, for use on other
// goroutines. Fixture and the New* methods build workspaces through the
// admin API; SecretRe, TimeRe and TS are the value shapes both suites
// check; CopyDir, SelfSigned, LineDiff and Tail are the small
// tools both need.
//
// The package is for tests only: it imports testing, and nothing outside
// the tests imports it.
package testserver
