package main

// The parsing rules page in Chromium (a flow of TestDashboardBrowser): a
// mail of a product no parser reads arrives over SMTP and stays unparsed;
// an admin writes a rule on the page, tries it on the kept mail (a field it
// cannot find says why), fixes it, saves it and re-reads the mail into a
// report with every field.

import (
	"net/smtp"
	"strings"
)

func dashE2ERules(b *dashTab) {
	w, _ := b.loginNew("rules", []dashJob{{"Bacula director", "custom", 0, ""}, {"FileServer", "custom", 1, ""}}, "admin")
	addr := w.ingest["Bacula director"]
	// The run was last night (the suite's clock is in November).
	raw := []byte(strings.ReplaceAll(string(rlBacula(b.t, addr, "dash-b1@backup.example.net")), "16-Mar-2026", "04-Nov-2026"))
	if err := smtp.SendMail(b.s.c.SMTPAddr, nil, "bacula@backup.example.net", []string{addr}, raw); err != nil {
		b.t.Fatalf("send the Bacula mail: %v", err)
	}
	b.open("/settings/rules")
	b.waitText("no parsing rule of the workspace matches the mail")

	// A first draft looks for the size under a heading the mail lacks.
	draft := strings.Replace(rlBaculaRule, `"size": {"regexp": "SD Bytes Written:\\s+([\\d,]+)", "unit": "B", "grouping": ","}`, `"size": {"after": "Bytes:"}`, 1)
	if draft == rlBaculaRule {
		b.t.Fatal("the draft did not change")
	}
	setDraft := func(rule string) {
		b.t.Helper()
		dashEval[bool](b, `(document.querySelector('#rule').value = `+dashJS(rule)+`, document.querySelector('#unparsedId').selectedIndex = 1, true)`)
	}
	setDraft(draft)
	b.click("#try")
	b.waitFor("the reading", `document.querySelector('#fields')`)
	cell := func(sel string) string {
		b.t.Helper()
		return dashEval[string](b, `(document.querySelector(`+dashJS(sel)+`) || {innerText: '(none)'}).innerText`)
	}
	if got := cell(`#fields [data-field=jobName] .value`); got != "FileServer" {
		b.t.Errorf("jobName read %q", got)
	}
	if got := cell(`#fields [data-field=size] .why`); got != `no line of the body starts with "bytes:"` {
		b.t.Errorf("the empty size says %q", got)
	}
	if got := cell(`#result [data-field="size (bytes)"] .value`); got != "" {
		b.t.Errorf("size in the report %q, want none", got)
	}
	// The draft is kept in the editor; fixed, every field reads.
	if got := dashEval[string](b, `document.querySelector('#rule').value`); !strings.Contains(got, `"Bytes:"`) {
		b.t.Errorf("the editor lost the draft: %s", got)
	}
	setDraft(rlBaculaRule)
	b.click("#try")
	b.waitFor("the fixed reading", `document.querySelector('#result [data-field="size (bytes)"] .value') && document.querySelector('#result [data-field="size (bytes)"] .value').innerText === '1234567890'`)
	want := map[string]string{
		"status": "failed", "job name": "FileServer", "started": "2026-11-04 22:05:02 UTC", "completed": "2026-11-04 22:07:45 UTC",
		"duration (s)": "163", "size (bytes)": "1234567890", "error text": `Write error on device "FileStorage": No space left on device`,
	}
	for f, v := range want {
		if got := cell(`#result [data-field="` + f + `"] .value`); got != v {
			b.t.Errorf("report %s = %q, want %q", f, got, v)
		}
	}
	b.click("#save")
	b.waitText(`Rule “Bacula” saved.`)
	if n := b.count("#rules tbody tr[data-row]"); n != 1 {
		b.t.Fatalf("%d rules listed, want 1\n%s", n, b.snapshot())
	}
	b.click(`#rules button[aria-label^="Re-read"]`)
	b.waitText("Re-read 1 mail(s) the rule matches: 1 became reports, 0 still unparsed.")
	b.waitText("No unparsed mails.")

	var job mlJob
	b.s.admin(b.t, "GET", "/workspaces/"+w.id+"/jobs/"+w.jobs["FileServer"], nil, 200, &job)
	if len(job.History) != 1 {
		b.t.Fatalf("FileServer history: %+v", job.History)
	}
	h := job.History[0]
	if h.Status != "failed" || h.StartedAt == nil || *h.StartedAt != "2026-11-04T22:05:02.000Z" || h.CompletedAt != "2026-11-04T22:07:45.000Z" ||
		h.DurationSeconds == nil || *h.DurationSeconds != 163 || h.SizeBytes == nil || *h.SizeBytes != 1234567890 || h.Source != "email:custom" {
		b.t.Errorf("result: %+v", h)
	}
	if len(job.UnresolvedAlerts) != 1 || job.UnresolvedAlerts[0].Summary != want["error text"] {
		b.t.Errorf("alert: %+v", job.UnresolvedAlerts)
	}
}
