package main

// The tests that run the backupmon binary as a child process get it from
// internal/testserver, which builds it on first use; TestMain removes it.

import (
	"testing"

	"backupmon/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }
