package tune

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestProcs runs Procs in child processes: it adds one P to the
// default, once, and leaves a GOMAXPROCS set in the environment alone.
func TestProcs(t *testing.T) {
	const childEnv = "BACKUPMON_TUNE_PROCS_CHILD"
	if os.Getenv(childEnv) != "" {
		before := runtime.GOMAXPROCS(0)
		Procs()
		Procs()
		fmt.Printf("procs %d %d\n", before, runtime.GOMAXPROCS(0))
		os.Exit(0)
	}
	for _, c := range []struct {
		env   string // GOMAXPROCS, or "" for none
		added int
	}{{"", 1}, {"3", 0}, {"1", 0}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestProcs$", "-test.count=1")
		env := []string{childEnv + "=1"}
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GOMAXPROCS=") {
				env = append(env, kv)
			}
		}
		if c.env != "" {
			env = append(env, "GOMAXPROCS="+c.env)
		}
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOMAXPROCS=%q: child: %v", c.env, err)
		}
		var before, after int
		if _, err := fmt.Sscanf(string(out), "procs %d %d", &before, &after); err != nil {
			t.Fatalf("GOMAXPROCS=%q: child printed %q", c.env, out)
		}
		if after != before+c.added {
			t.Errorf("GOMAXPROCS=%q: %d Ps before, %d after; want %d more", c.env, before, after, c.added)
		}
		if c.env != "" && strconv.Itoa(after) != c.env {
			t.Errorf("GOMAXPROCS=%q: %d Ps after", c.env, after)
		}
	}
}
