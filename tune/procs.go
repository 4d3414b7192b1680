// Package tune sets the Go runtime for a process that serves: the number of
// threads running Go code, which the log's fsync wants one more of.
package tune

import (
	"os"
	"runtime"
	"sync"
)

var tuneOnce sync.Once

// Procs gives a process that runs a Log one more P than the runtime's
// default GOMAXPROCS, unless the GOMAXPROCS environment variable sets it.
// The committer spends most of its time in fsync, a system call during
// which its P is idle until the scheduler takes it back; the spare P keeps
// every CPU running goroutines meanwhile (bench/RESULTS.md measures it).
// Calls after the first do nothing.
func Procs() {
	tuneOnce.Do(func() {
		if _, set := os.LookupEnv("GOMAXPROCS"); !set {
			runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
		}
	})
}
