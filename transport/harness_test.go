package transport_test

// The black-box harness is internal/testserver's: a real engine (log and
// snapshots in a temp dir) behind the real fasthttp listeners on loopback,
// driven with net/http.

import (
	"testing"

	"backupmon/internal/testserver"
)

// startFixture starts a server with the default options and makes the
// default fixture in it.
func startFixture(t *testing.T) (*testserver.Server, testserver.Fixture) {
	t.Helper()
	s := testserver.Start(t, testserver.Options{})
	return s, s.Fixture(testserver.FixtureOptions{})
}
