package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// `backupmon nats` with a port in use says which and exits at once,
// without making its store directory.
func TestNatsPortInUse(t *testing.T) {
	port := busyPort(t)
	for _, tc := range []struct {
		what string
		args []string
	}{
		{"client port", []string{"--listen", port}},
		{"route port", []string{"--listen", "127.0.0.1:0", "--cluster-listen", port}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			store := filepath.Join(t.TempDir(), "nats")
			var out, errOut bytes.Buffer
			began := time.Now()
			code := natsCommand(append(tc.args, "--store", store), &out, &errOut)
			if code != 1 || !strings.Contains(errOut.String(), "backupmon nats: listen "+port+": ") {
				t.Fatalf("exit %d, said %q; want 1 and the port named", code, errOut.String())
			}
			if took := time.Since(began); took > 5*time.Second {
				t.Errorf("took %s to give up", took)
			}
			if _, err := os.Stat(store); !os.IsNotExist(err) {
				t.Errorf("the failed start made %s (%v)", store, err)
			}
		})
	}
}
