package dashboard

import (
	"bytes"
	"html/template"
	"testing"
	"time"

	"backupmon/engine"
	"backupmon/state"
)

// queueRowTemplate is the queue's row markup as an html/template: the
// reference QueueRows must equal byte for byte, escaping included.
const queueRowTemplate = `{{define "rows"}}{{range .Items}}{{$a := .Job.Alert}}<tr data-row="{{.Job.ID}}"{{if and $a (eq $a.Status "acknowledged")}} class="dim"{{end}}>
{{if $.V.CanTriage}}<td class="sel">{{if $a}}<input type="checkbox" name="alert" value="{{$a.ID}}" form="bulk" aria-label="Select {{.Job.Name}}">{{end}}</td>{{end}}
<td data-label="Job"><a data-open href="/jobs/{{.Job.ID}}">{{.Job.Name}}</a><div class="muted">{{vendor .Job.Vendor}} · {{.Job.DeviceName}}</div></td>
<td data-label="Status">{{template "status" .Job.Status}}{{with .Job.Overdue}}{{if .Since}} <span class="muted">{{span .Minutes}} late</span>{{if .Missed}}<div class="overdue">{{missed .}}</div>{{end}}{{end}}{{end}}{{if .Job.SizeDrop.Flagged}} <span class="pill sizedrop">{{.Job.SizeDrop.Text}}</span>{{end}}</td>
<td data-label="Alert">{{if $a}}{{template "alertpills" $a}} <span class="muted">{{$a.Type}}</span>{{with $.V.Summary $a}}<div class="summary">{{.}}</div>{{end}}{{with $a.AI}}{{template "ai" .}}{{end}}{{else}}<span class="muted">no open alert</span>{{end}}</td>
<td data-label="Since">{{template "time" ($.V.T .Since)}} <span class="muted">{{$.V.Ago .Since}}</span></td>
<td data-label="Last report">{{template "time" ($.V.T .Job.LastReportAt)}}</td>
</tr>
{{end}}{{end}}`

var rowReference = template.Must(template.Must(template.New("").Funcs(funcs).
	ParseFS(templateFS, "templates/partials.html")).Parse(queueRowTemplate))

// sameRows fails t unless QueueRows and the reference template write the
// same bytes for items.
func sameRows(t *testing.T, v *view, items []engine.QueueItem) {
	t.Helper()
	var want bytes.Buffer
	if err := rowReference.ExecuteTemplate(&want, "rows", struct {
		V     *view
		Items []engine.QueueItem
	}{v, items}); err != nil {
		t.Fatal(err)
	}
	if got := string(v.QueueRows(items)); got != want.String() {
		t.Fatalf("QueueRows differs from html/template:\n got %q\nwant %q", got, want.String())
	}
}

func rowView(triage bool) *view {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	return &view{CanTriage: triage, Now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC).UnixMilli(), loc: berlin}
}

func rowItem(id, name, vendor, device, status, summary, alertStatus string, late, since, last int64) engine.QueueItem {
	it := engine.QueueItem{Since: since, Job: engine.BoardJob{ID: id, Name: name, Vendor: vendor, DeviceName: device,
		Status: status, LateMinutes: late, LastReportAt: last}}
	if late != 0 {
		it.Job.Overdue = state.Overdue{Since: since - 1, Minutes: late, Missed: int(late / 1440), More: late > 1440*state.MaxMissedRuns}
	}
	if alertStatus != "" {
		it.Job.Alert = &engine.BoardAlert{ID: "alr_" + id, Type: "job_failed", Severity: "critical", Status: alertStatus, Summary: summary}
		if summary != "" {
			it.Job.Alert.AI = &engine.BoardAI{Cause: summary + " <cause>", Confidence: "medium & more", Category: device}
		}
	}
	return it
}

func TestQueueRowsMatchTemplate(t *testing.T) {
	now := rowView(true).Now
	cases := []struct {
		name  string
		items []engine.QueueItem
	}{
		{"none", nil},
		{"plain", []engine.QueueItem{rowItem("job_1", "Nightly", "veeam", "SRV-01", "failed", "Disk full", "open", 0, now-3600_000, now-7200_000)}},
		{"acknowledged, no summary", []engine.QueueItem{rowItem("job_2", "Weekly", "acronis", "NAS", "failed", "", "acknowledged", 0, now-86400_000, 0)}},
		{"missing without alert", []engine.QueueItem{rowItem("job_3", "Files", "generic", "PC", "missing", "", "", 1500, 0, 0)}},
		{"markup in text", []engine.QueueItem{rowItem(`a"b<c>&'+`, `<script>alert(1)</script>`, `x"><img src=x onerror=1>`, "dev\x00ice", "failed",
			`<img src=x onerror="alert('x')"> & + ü €`, "open", 61, now+5000, now-60_000)}},
		{"size drop", []engine.QueueItem{func() engine.QueueItem {
			it := rowItem("job_4", "Nightly", "veeam", "SRV", "healthy", "", "", 0, now-60_000, now-60_000)
			it.Job.SizeDrop = engine.SizeDrop{ResultID: engine.ID{1}, Below: 92}
			return it
		}()}},
		{"url bytes", []engine.QueueItem{rowItem("a b/c?d=e#f%41%zz%4", "n", "v", "d", "late", "s", "open", 60, now, now)}},
		{"missing, due time in the zone", []engine.QueueItem{func() engine.QueueItem {
			it := rowItem("job_4", "Files", "generic", "PC", "missing",
				"No backup report received: one was due at 2026-11-22T00:41:00.000Z and 60 minutes of grace have passed", "open", 3366, now-3366*60_000, 0)
			it.Job.Alert.Type = "missing"
			return it
		}()}},
		{"invalid utf-8", []engine.QueueItem{rowItem("\xff\xfe", "\xc3(", "\xed\xa0\x80", "ok", "failed", "\xf0\x28\x8c\xbc", "open", 2880, 1, 1)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sameRows(t, rowView(true), tc.items)
			sameRows(t, rowView(false), tc.items)
		})
	}
}

// FuzzQueueRows checks the hand-written rows against html/template on any
// text a report or an e-mail could carry.
func FuzzQueueRows(f *testing.F) {
	f.Add("job_1", "Nightly <b>", "veeam", "SRV", "failed", "Disk & full", "open", int64(90), int64(1700000000000), true)
	f.Add(`"'><`, "\x00+", "%2f%", "é", "missing", "", "", int64(0), int64(0), false)
	f.Fuzz(func(t *testing.T, id, name, vendor, device, status, summary, alertStatus string, late, since int64, triage bool) {
		v := rowView(triage)
		// Keep times within the years time.Format writes plainly.
		since = v.Now + since%(100*365*86400_000)
		it := rowItem(id, name, vendor, device, status, summary, alertStatus, late, since, since/2)
		if alertStatus != "" {
			it.Job.Alert.Severity, it.Job.Alert.Type = summary, name
		}
		sameRows(t, v, []engine.QueueItem{it})
	})
}

// A missing alert's summary shows its due time in the workspace's zone and
// its grace as a span; other summaries, and text that is not the engine's,
// stay as recorded.
func TestSummaryInZone(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	v := &view{loc: berlin}
	for _, tc := range []struct {
		typ, summary, want string
	}{
		{"missing", "No backup report received: one was due at 2026-11-24T02:19:00.000Z and 60 minutes of grace have passed",
			"No backup report received: one was due at Tue 24 Nov 03:19 CET, and 1 h of grace has passed."},
		{"missing", "No backup report received: one was due at 2026-07-01T22:00:00.000Z and 0 minutes of grace have passed",
			"No backup report received: one was due at Thu 2 Jul 00:00 CEST."},
		{"missing", "No backup report received: one was due at 2026-11-24T02:19:00.000Z and 3366 minutes of grace have passed",
			"No backup report received: one was due at Tue 24 Nov 03:19 CET, and 2 d 8 h of grace has passed."},
		{"missing", "No backup report received: one was due at 2026-13-24T02:19:00.000Z and 60 minutes of grace have passed",
			"No backup report received: one was due at 2026-13-24T02:19:00.000Z and 60 minutes of grace have passed"},
		{"failed", "Job failed at 2026-11-24T02:19:00.000Z", "Job failed at 2026-11-24T02:19:00.000Z"},
	} {
		if got := v.Summary(engine.BoardAlert{Type: tc.typ, Summary: tc.summary}); got != tc.want {
			t.Errorf("Summary(%s %q) = %q, want %q", tc.typ, tc.summary, got, tc.want)
		}
	}
}
