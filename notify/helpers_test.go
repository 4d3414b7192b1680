package notify

import (
	"log/slog"
	"net"
	"testing"
	"time"

	"backupmon/engine"
)

// sentAt is the clock of every test Notifier.
var sentAt = time.Date(2025, 3, 14, 9, 26, 53, 589_000_000, time.UTC)

const (
	sentAtText = "2025-03-14T09:26:53.589Z"
	wsText     = "0195a0b1-7c4e-7000-8000-00000000000a"
	alertJSON  = `{"id":"0195a0b1-7c4e-7000-8000-0000000000a1","type":"failed","severity":"critical","status":"open","summary":"Veeam job failed: exit code 2"}`
	jobJSON    = `{"id":"0195a0b1-7c4e-7000-8000-0000000000b1","name":"nightly-db","status":"failed"}`
	secret     = "whsec_3f9a"
)

var (
	wsID       = mustID(wsText)
	deliveryID = mustID("0195a0b1-7c4e-7000-8000-0000000000d1")
	channelID  = mustID("0195a0b1-7c4e-7000-8000-0000000000c1")
)

func mustID(s string) engine.ID {
	id, ok := engine.ParseID(s)
	if !ok {
		panic("bad test id " + s)
	}
	return id
}

// testNotice is an alert.opened notice for a channel of type typ at url.
func testNotice(typ, url string) engine.Notice {
	return engine.Notice{
		Workspace: wsID,
		Delivery:  deliveryID,
		Attempt:   3,
		Channel: engine.NoticeChannel{
			ID: channelID, Type: typ, Name: "ops", URL: url,
			To: "ops@example.com", Secret: secret,
		},
		Event:         engine.EventOpened,
		Alert:         []byte(alertJSON),
		Job:           []byte(jobJSON),
		WorkspaceName: "Demo MSP",
		ClientName:    "Acme",
		JobName:       "nightly-db",
		AlertType:     "failed",
		Severity:      "critical",
		Summary:       "Veeam job failed: exit code 2",
	}
}

// outcome is one call of Options.Done.
type outcome struct {
	ws, delivery engine.ID
	attempt      int
	failure      string
}

// recorder captures the outcomes of a Notifier.
type recorder struct{ ch chan outcome }

func newRecorder() *recorder { return &recorder{ch: make(chan outcome, 256)} }

func (r *recorder) done(ws, delivery engine.ID, attempt int, failure string) {
	r.ch <- outcome{ws, delivery, attempt, failure}
}

// next waits for the next outcome.
func (r *recorder) next(t *testing.T) outcome {
	t.Helper()
	select {
	case o := <-r.ch:
		return o
	case <-time.After(10 * time.Second):
		t.Fatal("no outcome reported within 10s")
		return outcome{}
	}
}

// none fails if an outcome is waiting.
func (r *recorder) none(t *testing.T) {
	t.Helper()
	select {
	case o := <-r.ch:
		t.Fatalf("unexpected outcome %+v", o)
	default:
	}
}

// newTestNotifier starts a Notifier whose outcomes go to the returned
// recorder (unless opts.Done is set); it is closed when the test ends.
func newTestNotifier(t *testing.T, opts Options) (*Notifier, *recorder) {
	t.Helper()
	rec := newRecorder()
	if opts.Done == nil {
		opts.Done = rec.done
	}
	opts.Now = func() time.Time { return sentAt }
	opts.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	n := New(opts)
	t.Cleanup(n.Close)
	return n, rec
}

// sendOne delivers nt and waits for its outcome, checking its identity.
func sendOne(t *testing.T, n *Notifier, rec *recorder, nt engine.Notice) string {
	t.Helper()
	n.Deliver(nt)
	o := rec.next(t)
	if o.ws != nt.Workspace || o.delivery != nt.Delivery || o.attempt != nt.Attempt {
		t.Fatalf("outcome for %v/%v/%d, want %v/%v/%d", o.ws, o.delivery, o.attempt, nt.Workspace, nt.Delivery, nt.Attempt)
	}
	return o.failure
}

// closedAddr returns a local address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
