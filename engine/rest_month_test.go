package engine

import (
	"testing"
)

// TestRESTMonthCountIsLogged: what REST requests leave in a workspace's
// state (the month's count, kept for plans with a quota) is what the log
// holds, on every plan: a workspace recovered from the log alone holds the
// same state as the live one.
func TestRESTMonthCountIsLogged(t *testing.T) {
	for _, plan := range []string{"pro", "growth", "trial"} {
		t.Run(plan, func(t *testing.T) {
			dir := t.TempDir()
			e := openTestEngine(t, dir)
			ws, err := e.CreateWorkspace(WorkspaceInput{Name: Some("Acme"), Plan: Some(plan)})
			check(t, "create workspace", err)
			k, err := e.CreateKey(ws.ID, KeyInput{Name: Some("rest"), Type: Some("rest"), Scopes: Some([]string{"jobs:read"})})
			check(t, "create key", err)
			for range 3 {
				if a := e.REST(HashKey([]byte(k.Key)), &RESTQuery{Endpoint: EndpointJobs, Limit: 5}, nil); a.Outcome != RESTOK {
					t.Fatalf("REST read: outcome %v", a.Outcome)
				}
			}
			check(t, "barrier", e.barrier())
			want := takeState(t, e, true)
			crash := copyDir(t, dir)
			check(t, "close", e.Close())
			e = openTestEngine(t, crash)
			closeAtEnd(t, e)
			sameState(t, "recovered from the log alone", takeState(t, e, true), want)
		})
	}
}
