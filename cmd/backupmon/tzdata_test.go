package main

import (
	"os/exec"
	"strings"
	"testing"

	"backupmon/internal/testserver"
)

// The binary carries the time zone database (time/tzdata), so that a
// workspace's zone loads on a host without zoneinfo files. A host's own
// files cannot be hidden from a test, so this checks the binary's
// dependencies, which is what decides it.
func TestBinaryEmbedsTimeZones(t *testing.T) {
	out, err := exec.Command(testserver.GoTool(), "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps .: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "time/tzdata" {
			return
		}
	}
	t.Fatalf("backupmon does not import time/tzdata; its dependencies:\n%s", out)
}
