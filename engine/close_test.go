package engine

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// Commands sent while Engine.Close runs, or after it, return promptly
// (ReportNotRecorded, ErrClosed or a zero answer) instead of waiting for an
// actor that has stopped. Many goroutines send reports, reads and changes
// while Close runs; each sends a few more once the engine is closed. A hang
// fails the test at its deadline.
func TestCommandsRacingCloseReturn(t *testing.T) {
	const rounds, senders = 40, 25
	for round := range rounds {
		e := openTestEngine(t, t.TempDir())
		ws, err := e.CreateWorkspace(WorkspaceInput{Name: Some("Racing"), Plan: Some("pro")})
		check(t, "create workspace", err)
		c, err := e.CreateClient(ws.ID, ClientInput{Name: Some("client")})
		check(t, "create client", err)
		j, err := e.CreateJob(ws.ID, JobInput{ClientID: Some(c.ID), Name: Some("job"), Vendor: Some("veeam"),
			Device:   Some(DeviceInput{Name: Some("d"), Type: Some("server"), Hostname: Some("h")}),
			Schedule: Some(ScheduleInput{IntervalMinutes: Some(int64(60))})})
		check(t, "create job", err)
		k, err := e.CreateKey(ws.ID, KeyInput{Name: Some("report"), Type: Some("report")})
		check(t, "create key", err)
		hash := HashKey([]byte(k.Key))
		rk, err := e.CreateKey(ws.ID, KeyInput{Name: Some("rest"), Type: Some("rest")})
		check(t, "create REST key", err)
		restHash := HashKey([]byte(rk.Key))

		start := make(chan struct{})
		var wg sync.WaitGroup
		for g := range senders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				after := 0
				for i := 0; after < 3; i++ {
					if e.closed.Load() {
						after++
					}
					switch g % 5 {
					case 0:
						e.Report(hash, &ReportInput{JobID: j.ID, Status: ReportOK, SizeBytes: -1, DurationSeconds: -1})
					case 1:
						e.Jobs(ws.ID) // ask
					case 2:
						e.UpdateClient(ws.ID, c.ID, ClientInput{Name: Some(fmt.Sprintf("client %d.%d", g, i))}) // change
					case 3:
						e.ImportReport(ws.ID, j.ID, ImportInput{ReceivedAt: e.Now(), Status: ReportOK, DurationSeconds: -1, SizeBytes: -1})
					case 4:
						e.REST(restHash, &RESTQuery{Endpoint: EndpointJobs, Limit: 10}, nil)
					}
				}
			}()
		}
		close(start)
		time.Sleep(time.Duration(round%4) * time.Millisecond)
		closed := make(chan error, 1)
		go func() { closed <- e.Close() }()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		deadline := time.After(10 * time.Second)
		select {
		case <-done:
		case <-deadline:
			t.Fatalf("round %d: commands sent during or after Close did not return within 10s", round)
		}
		select {
		case <-closed:
		case <-deadline:
			t.Fatalf("round %d: Close did not return within 10s", round)
		}
		// After Close, every kind of command answers at once.
		if r := e.Report(hash, &ReportInput{JobID: j.ID, Status: ReportOK, SizeBytes: -1, DurationSeconds: -1}); r.Outcome != ReportNotRecorded {
			t.Errorf("round %d: report after Close: outcome %d, want ReportNotRecorded", round, r.Outcome)
		}
		if a := e.REST(restHash, &RESTQuery{Endpoint: EndpointJobs, Limit: 10}, nil); a.Outcome != RESTFailed {
			t.Errorf("round %d: REST after Close: outcome %d, want RESTFailed", round, a.Outcome)
		}
		if _, err := e.UpdateClient(ws.ID, c.ID, ClientInput{Name: Some("late")}); err != ErrClosed {
			t.Errorf("round %d: change after Close: %v, want ErrClosed", round, err)
		}
		if v, _ := e.Jobs(ws.ID); v != nil {
			t.Errorf("round %d: read after Close answered %v, want nothing", round, v)
		}
	}
}
