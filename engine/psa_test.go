package engine

import (
	"testing"
	"time"

	"backupmon/state"
)

// psHold is a deliverer that hands every notice to the test, which
// decides its outcome.
type psHold chan state.Notice

func (h psHold) Deliver(n state.Notice) { h <- n }

// next returns the next notice handed out, failing after 5 s.
func (h psHold) next(t *testing.T, what string) state.Notice {
	t.Helper()
	select {
	case n := <-h:
		return n
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no notice handed out", what)
		return state.Notice{}
	}
}

// none fails when a notice is handed out within 200 ms.
func (h psHold) none(t *testing.T, what string) {
	t.Helper()
	select {
	case n := <-h:
		t.Fatalf("%s: notice %s handed out", what, n.Event)
	case <-time.After(200 * time.Millisecond):
	}
}

// psChannel creates a ConnectWise channel and maps the workspace's client
// to AcmeCo.
func psChannel(t *testing.T, e *Engine, ws string) string {
	t.Helper()
	ch, err := e.CreateChannel(ws, ChannelInput{Type: Some(state.ChannelConnectWise), Name: Some("CW"),
		Settings: map[string]string{"url": "https://cw.example.com/v4_6_release/apis/3.0", "company": "msp", "publicKey": "pub",
			"clientId": "cid", "defaultCompany": "Catchall", "board": "Service Desk", "closedStatus": "Closed"},
		Secrets: map[string]string{"privateKey": "priv"}})
	check(t, "channel", err)
	cls, err := e.Clients(ws)
	check(t, "clients", err)
	_, err = e.MapClient(ws, ch.ID, cls[0].ID, ClientMapInput{Company: Some("AcmeCo")})
	check(t, "map", err)
	return ch.ID
}

// The deliveries of one alert to a PSA channel go one at a time: the
// acknowledgement's waits until the opening's is finished, and carries the
// ticket the opening's attempt reported. The ticket, the mapping, the
// settings and the waiting notice's note survive a snapshot and a restart.
func TestPSAOneAtATimeAndDurable(t *testing.T) {
	dir := t.TempDir()
	e, ws, _, hold, opened := psOpenedAlert(t, dir)
	if opened.Event != state.EventOpened || opened.Channel.Ticket != "" || opened.Channel.Company != "AcmeCo" || !opened.Channel.Mapped ||
		opened.Channel.Board != "Service Desk" || state.Lookup(opened.Channel.Secrets, "privateKey") != "priv" || opened.SizeBytes != 2048 || opened.DurationSeconds != 61 {
		t.Fatalf("the opening's notice %+v", opened)
	}
	_, err := e.ChangeAlert(ws, opened.AlertID.String(), Acknowledge, time.Time{}, "user:ann@example.test", "on it")
	check(t, "acknowledge", err)
	hold.none(t, "the acknowledgement while the opening is in flight")

	// The opening's attempt made ticket 1001, then failed: the ticket is
	// kept, the attempt retried later.
	check(t, "outcome", e.DeliveryOutcome(opened.Workspace, opened.Delivery, opened.Attempt, Outcome{Failure: "HTTP 503", Ticket: "1001"}))
	dtWaitDeliveries(t, e, ws, "the opening retried", func(l []DeliveryView) bool {
		return len(l) == 2 && l[1].Attempts == 1 && l[1].NextAttemptAt != 0
	})
	hold.none(t, "the acknowledgement while the opening waits for its retry")

	check(t, "snapshot", e.Snapshot())
	check(t, "close", e.Close())
	e = dtOpen(t, dir, dtStart)
	closeAtEnd(t, e)
	maps, err := e.ClientMaps(ws, psChannelID(t, e, ws))
	check(t, "client maps", err)
	if len(maps) != 1 || !maps[0].Mapped || maps[0].Company != "AcmeCo" {
		t.Fatalf("client maps after the restart: %+v", maps)
	}
	hold = make(psHold, 16)
	e.SetDeliverer(hold)
	_, err = e.SetClock(time.Time{}, time.Minute)
	check(t, "clock", err)
	retry := hold.next(t, "the opening's retry")
	if retry.Event != state.EventOpened || retry.Channel.Ticket != "1001" || retry.Attempt != 2 {
		t.Fatalf("the retry's notice: event %s, ticket %q, attempt %d; want the opening's second attempt on ticket 1001", retry.Event, retry.Channel.Ticket, retry.Attempt)
	}
	check(t, "outcome", e.DeliveryOutcome(retry.Workspace, retry.Delivery, retry.Attempt, Outcome{Ticket: "1001"}))
	ack := hold.next(t, "the acknowledgement")
	if ack.Event != state.EventAcknowledged || ack.Channel.Ticket != "1001" || ack.Note != "Acknowledged by user:ann@example.test: on it" {
		t.Fatalf("the acknowledgement's notice: event %s, ticket %q, note %q", ack.Event, ack.Channel.Ticket, ack.Note)
	}

	// A failure for good ends the delivery at once.
	check(t, "outcome", e.DeliveryOutcome(ack.Workspace, ack.Delivery, ack.Attempt, Outcome{Failure: "HTTP 401: Unauthorized", Permanent: true}))
	l := dtWaitDeliveries(t, e, ws, "the acknowledgement failed", func(l []DeliveryView) bool { return len(l) == 2 && l[0].State != "pending" })
	if l[0].State != "failed" || l[0].Attempts != 1 || *l[0].LastError != "HTTP 401: Unauthorized" {
		t.Fatalf("the acknowledgement's delivery %+v: want failed after its one attempt", l[0])
	}
}

func psChannelID(t *testing.T, e *Engine, ws string) string {
	t.Helper()
	chs, err := e.Channels(ws)
	check(t, "channels", err)
	if len(chs) != 1 || chs[0].Settings["board"] != "Service Desk" || len(chs[0].SecretsSet) != 1 {
		t.Fatalf("channels after the restart: %+v", chs)
	}
	return chs[0].ID
}

// Channel bodies of the new types are checked field by field, and a bad
// one changes nothing.
func TestPSAChannelChecks(t *testing.T) {
	e := dtOpen(t, t.TempDir(), dtStart)
	closeAtEnd(t, e)
	ws, _ := monitoredJob(t, e, 60, 30)
	key32 := "R0UT1NGKEYR0UT1NGKEYR0UT1NGKEY32"
	for _, tc := range []struct {
		name   string
		in     ChannelInput
		field  string
		prefix string
	}{
		{"a setting missing", ChannelInput{Type: Some(state.ChannelPagerDuty), Name: Some("p")}, "secrets.routingKey", "secrets.routingKey is required"},
		{"a short routing key", ChannelInput{Type: Some(state.ChannelPagerDuty), Name: Some("p"), Secrets: map[string]string{"routingKey": "short"}}, "secrets.routingKey", "secrets.routingKey must be the 32-character"},
		{"an unknown setting", ChannelInput{Type: Some(state.ChannelPagerDuty), Name: Some("p"), Secrets: map[string]string{"routingKey": key32}, Settings: map[string]string{"colour": "red"}}, "settings.colour", `unknown field "settings.colour"`},
		{"a url at the top", ChannelInput{Type: Some(state.ChannelTeams), Name: Some("t"), URL: Some("https://x.example.com"), Secrets: map[string]string{"url": "https://x.example.com"}}, "url", "url is only for webhook and slack channels"},
		{"a bad url", ChannelInput{Type: Some(state.ChannelTeams), Name: Some("t"), Secrets: map[string]string{"url": "ftp://x"}}, "secrets.url", "secrets.url must be an absolute http or https URL"},
		{"an id not a number", ChannelInput{Type: Some(state.ChannelHaloPSA), Name: Some("h"), Settings: map[string]string{"url": "https://h.example.com/api", "authUrl": "https://h.example.com/auth",
			"clientId": "c", "defaultCompany": "twelve", "closedStatus": "9"}, Secrets: map[string]string{"clientSecret": "s"}}, "settings.defaultCompany", "settings.defaultCompany must be a positive integer"},
		{"settings on a webhook", ChannelInput{Type: Some(state.ChannelWebhook), Name: Some("w"), URL: Some("https://x.example.com"), Settings: map[string]string{"a": "b"}}, "settings", "settings and secrets are not for webhook channels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.CreateChannel(ws, tc.in)
			ee, ok := err.(*Error)
			if !ok || ee.Kind != KindInvalid || ee.Field != tc.field || len(ee.Message) < len(tc.prefix) || ee.Message[:len(tc.prefix)] != tc.prefix {
				t.Fatalf("error %v, want %s on %s", err, tc.prefix, tc.field)
			}
		})
	}
	if chs, _ := e.Channels(ws); len(chs) != 0 {
		t.Fatalf("refused bodies made channels: %+v", chs)
	}
}
