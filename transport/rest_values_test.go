package transport_test

// Values that change shape or status: text that needs escaping, alerts
// whose status moves with the clock and with reports, case-insensitive
// search beyond ASCII.

import (
	"net/url"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

func TestRESTTextFields(t *testing.T) {
	s, f := startFixture(t)
	names := []string{
		`Quote " and \ backslash`,
		"Tab\tnew\nline\rreturn",
		"<script>alert('x')</script> & more",
		"Line\u2028separator\u2029paragraph",
		"Control \u0001\u001f\u007f",
		"Snowman ☃, emoji 🙂, 日本",
		"  spaces  ",
	}
	clients := map[string]string{}
	jobs := map[string]string{}
	for _, n := range names {
		c := s.NewClient(f.WS, n)
		clients[c] = n
		jobs[rsJob(s, f.WS, c, n, nil)] = n
	}
	for id, n := range clients {
		d := rsData(t, "client", rsGet(s, f.RestKey, "/clients/"+id))
		rpFields(t, "client", d, map[string]any{"name": n})
		h := rsData(t, "client health", rsGet(s, f.RestKey, "/clients/"+id+"/health"))
		rpFields(t, "client health", h, map[string]any{"clientName": n})
	}
	for id, n := range jobs {
		r := rsGet(s, f.RestKey, "/jobs/"+id)
		d := rsData(t, "job", r)
		rpFields(t, "job", d, map[string]any{"name": n, "clientName": n})
		rpFields(t, "job device", admObj(t, d, "device"), map[string]any{"name": "Host of " + n})
		admReport(s, id, f.ReportKey, "failed")
		for _, p := range []string{"/reports?jobId=", "/alerts?jobId="} {
			items := rsItems(t, p, rsGet(s, f.RestKey, p+id))
			if len(items) != 1 || items[0]["jobName"] != n {
				t.Errorf("%s%s: %v", p, id, items)
			}
		}
	}
	all := map[string]string{f.Client: "Globex"}
	for id, n := range clients {
		all[id] = n
	}
	rsWantIDs(t, "clients by name", rsIDs(rsWalk(s, f.RestKey, "/clients", 3)), rsSortedByName(all))
	// Search finds text that needs escaping.
	for id, n := range clients {
		items := rsItems(t, "search", rsGet(s, f.RestKey, "/clients"+rsQ("search", n)))
		if len(items) != 1 || items[0]["id"] != id {
			t.Errorf("search %q: %v", n, rsIDs(items))
		}
	}
}

func TestRESTSearchBeyondASCII(t *testing.T) {
	s, f := startFixture(t)
	greek := s.NewClient(f.WS, "ΟΔΟΣ Backup")
	kelvin := s.NewClient(f.WS, "\u212Aelvin Labs") // KELVIN SIGN
	turkish := s.NewClient(f.WS, "İstanbul Bilişim")
	for _, c := range []struct {
		search string
		want   []string
	}{
		{"οδοσ", []string{greek}},
		{"ΟΔΟΣ", []string{greek}},
		{"οδος", []string{greek}}, // final sigma: σ, ς and Σ are one letter without case
		{"kelvin", []string{kelvin}},
		{"KELVIN", []string{kelvin}},
		{"\u212Aelvin", []string{kelvin}},
		{"bilişim", []string{turkish}},
		{"BILIŞIM", []string{turkish}},
	} {
		items := rsItems(t, "search", rsGet(s, f.RestKey, "/clients"+rsQ("search", c.search)))
		rsWantIDs(t, "search "+c.search+" ("+url.QueryEscape(c.search)+")", rsIDs(items), c.want)
	}
}

func TestRESTAlertStatusesOverTime(t *testing.T) {
	s, f := startFixture(t)
	key := f.RestKey
	base := "/workspaces/" + f.WS + "/alerts/"
	warn := admReport(s, f.Job, f.ReportKey, "warn").JSON["alert_id"].(string)
	statusOf := func(status string) []string {
		t.Helper()
		return rsIDs(rsItems(t, status, rsGet(s, key, "/alerts?status="+status)))
	}
	one := func() map[string]any {
		t.Helper()
		items := rsItems(t, "alerts", rsGet(s, key, "/alerts"))
		if len(items) != 1 {
			t.Fatalf("%d alerts", len(items))
		}
		return items[0]
	}
	// Acknowledged, then raised by a failure: back to open, critical, the
	// same alert with its creation time.
	s.Advance(time.Minute)
	s.MustAdmin(200, "POST", base+warn+"/acknowledge", nil)
	rsWantIDs(t, "acknowledged", statusOf("acknowledged"), []string{warn})
	rsWantIDs(t, "open", statusOf("open"), nil)
	s.Advance(time.Minute)
	if id := admReport(s, f.Job, f.ReportKey, "failed").JSON["alert_id"]; id != warn {
		t.Fatalf("raised alert %v, want %s", id, warn)
	}
	rpFields(t, "raised", one(), map[string]any{"id": warn, "status": "open", "type": "failed", "severity": "critical",
		"acknowledgedAt": nil, "createdAt": testserver.TS(testserver.T0), "summary": "Backup failed (reported through the Report API)"})
	rsWantIDs(t, "open after the raise", statusOf("open"), []string{warn})
	// Snoozed until T: snoozed to T − 1 ms, open from T with snoozedUntil null.
	until := testserver.T0.Add(time.Hour)
	s.MustAdmin(200, "POST", base+warn+"/snooze", map[string]any{"until": admIn(until)})
	s.SetClock(until.Add(-time.Millisecond))
	rpFields(t, "snoozed", one(), map[string]any{"status": "snoozed", "snoozedUntil": testserver.TS(until)})
	rsWantIDs(t, "snoozed", statusOf("snoozed"), []string{warn})
	h := rsData(t, "health", rsGet(s, key, "/health"))
	rpFields(t, "health while snoozed", h, map[string]any{"openAlerts": 0, "unresolvedAlerts": 1})
	s.SetClock(until)
	rpFields(t, "snooze over", one(), map[string]any{"status": "open", "snoozedUntil": nil})
	rsWantIDs(t, "snooze over: snoozed", statusOf("snoozed"), nil)
	rsWantIDs(t, "snooze over: open", statusOf("open"), []string{warn})
	h = rsData(t, "health", rsGet(s, key, "/health"))
	rpFields(t, "health after the snooze", h, map[string]any{"openAlerts": 1, "unresolvedAlerts": 1})
	c := rsData(t, "client", rsGet(s, key, "/clients/"+f.Client))
	rpFields(t, "client after the snooze", c, map[string]any{"openAlerts": 1, "needsAttention": true})
	// Resolved by an ok report: recoverySeconds from creation to receipt.
	s.SetClock(until.Add(30 * time.Second))
	admReport(s, f.Job, f.ReportKey, "ok")
	rpFields(t, "resolved", one(), map[string]any{"status": "resolved", "resolvedAt": testserver.TS(until.Add(30 * time.Second)),
		"recoverySeconds": 3630, "snoozedUntil": nil})
	rsWantIDs(t, "unresolved", statusOf("unresolved"), nil)
	rsWantIDs(t, "resolved", statusOf("resolved"), []string{warn})
	if ua := admList(t, rsData(t, "job", rsGet(s, key, "/jobs/"+f.Job)), "unresolvedAlerts"); len(ua) != 0 {
		t.Errorf("job still shows %d unresolved alerts", len(ua))
	}
	// A new failure opens a new alert, listed first.
	s.Advance(time.Second)
	second := admReport(s, f.Job, f.ReportKey, "failed").JSON["alert_id"].(string)
	rsWantIDs(t, "both", rsIDs(rsItems(t, "alerts", rsGet(s, key, "/alerts"))), []string{second, warn})
}
