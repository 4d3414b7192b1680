package mailparse

import (
	"strings"
	"testing"
)

// veeamReport is a small Veeam job report in HTML: the heading with the
// result, the session line, the session table and the objects.
func veeamReport(heading, result, session, stats, objects string) string {
	return `<html><body><table><tr><td>` + heading + `<div>Created by ACME\admin at 01.02.2026 10:00.</div></td><td>` + result +
		`<div>1 of 1 VMs processed</div></td></tr></table><table><tr><td colspan="8">` + session + `</td></tr>` + stats +
		`<tr><td>Details</td></tr><tr><td>Name</td><td>Status</td><td>Start time</td><td>End time</td><td>Details</td></tr>` +
		objects + `</table></body></html>`
}

const veeamStats = `<tr><td>Success</td><td>0</td><td>Start time</td><td>23:50:00</td><td>Backup size</td><td>1.0 GB</td></tr>` +
	`<tr><td>Warning</td><td>0</td><td>End time</td><td>00:10:30</td><td>Transferred</td><td>-</td></tr>` +
	`<tr><td>Error</td><td>1</td><td>Duration</td><td>0:20:30</td></tr>`

func TestVeeamCases(t *testing.T) {
	runVendorCases(t, "veeam", []vendorCase{
		{name: "retry in heading and subject, across midnight, transferred printed as -",
			raw: veeamMail("[Failed] Nightly (Retry 1) (1 VMs) 1 failed",
				veeamReport("Backup job: Nightly (Retry 1)", "Failed", "Monday, 2 March 2026 23:50:00", veeamStats,
					`<tr><td>VM1</td><td>Failed</td><td>23:50:10</td><td>00:10:20</td><td>Error: Access is denied.<br>Error: Second problem.</td></tr>`)),
			status: Failed, job: "Nightly", summary: "Access is denied.",
			start: "2026-03-02T22:50:00Z", duration: wantSeconds(1230),
			size: wantBytes(-1)}, // a transferred size printed as -
		{name: "custom subject: the heading's result wins",
			raw: veeamMail("Backup report for ACME",
				veeamReport("Backup job: Nightly", "Warning", "Monday, 2 March 2026 23:50:00", veeamStats,
					`<tr><td>VM1</td><td>Warning</td><td>23:50:10</td><td>00:10:20</td><td>Low free space on the repository.</td></tr>`)),
			status: Warn, summary: "Low free space on the repository."},
		{name: "no session line: clocks read on the Date's day",
			raw: veeamMail("[Success] Nightly (1 VMs)",
				strings.Replace(veeamReport("Backup job: Nightly", "Success", "", veeamStats,
					`<tr><td>VM1</td><td>Success</td><td>23:50:10</td><td>00:10:20</td><td></td></tr>`), `<tr><td colspan="8"></td></tr>`, "", 1)),
			status: OK, end: "2026-03-02T23:10:30Z", duration: wantSeconds(1230)},
		{name: "subject only names the job",
			raw:    veeamMail("[Warning] File Server Copy (2 objects) 1 warning", "<html><body><p>Warning</p><p>Job finished with warnings.</p></body></html>"),
			status: Warn, job: "File Server Copy"},
	})
}

// veeamMail builds a Veeam report mail (HTML) by its subject and body.
func veeamMail(subject, body string) []byte {
	return testMail("veeam@acme.example", subject, "Tue, 03 Mar 2026 00:11:00 +0100", "text/html", body)
}

func TestVeeamUnreadable(t *testing.T) {
	runUnreadableCases(t, "veeam", veeamMail, []unreadableCase{
		{"heading without a result", "Nightly report",
			veeamReport("Backup job: Nightly", "", "Monday, 2 March 2026 23:50:00", veeamStats, "")},
		{"a running session", "Nightly report",
			veeamReport("Backup job: Nightly", "Running", "Monday, 2 March 2026 23:50:00", "", "")},
		{"neither heading nor subject", "Hello", "<p>Your backup ran.</p>"},
	})
}

func TestVeeamOtherVendorRefused(t *testing.T) {
	expectForeignRefused(t, "veeam", "nakivo/01-success.eml")
}

func TestVeeamIntegrityWords(t *testing.T) {
	checkIntegrityWords(t, veeamIntegrityRe, []integrityCase{
		{"Backup file health check has detected corrupted blocks in restore point 10.03.2026 02:00.", true},
		{"Storage-level corruption guard: the backup file is corrupted and cannot be repaired.", true},
		{"Recovery verification failed: the VM did not boot.", true},
		{"Ping test failed: no answer from 10.0.0.5.", true},
		{"Restore point 2026-03-01 is damaged.", true},
		{"Failed to open backup repository: the network path was not found.", false},
		{"Certificate verification failed for host vc01.", false},
		{"Backup file D:\\x.vbk is locked by another process.", false},
		{"Unable to truncate transaction logs.", false},
	})
}
