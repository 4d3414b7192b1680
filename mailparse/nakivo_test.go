package mailparse

import "testing"

func TestNakivoCases(t *testing.T) {
	from := `"NAKIVO Backup & Replication" <nbr@lakeshore.example.test>`
	html := func(subject, body string) []byte { return testMail(from, subject, "", "text/html", body) }
	plain := plainMail(from, "")
	runVendorCases(t, "nakivo", []vendorCase{
		{name: "status only in the subject, plain text",
			raw: plain(`Job "File-Servers" has completed: Stopped`,
				"NAKIVO Backup & Replication - Job Report\nFile-Servers\nStarted: Tue, 3 Mar 2026 at 10:00:00 PM (UTC +01:00)\nData transferred: 1.5 GB\n"),
			status: Failed, job: "File-Servers"},
		{name: "partially successful, the first failed VM leads the summary and the other is named",
			raw: html(`Job "Branch-VMs" has completed: Partially successful`,
				"<div>NAKIVO Backup &amp; Replication &mdash; Job Report</div><div>Branch-VMs</div><table>"+
					"<tr><td>Job status</td><td>Partially successful</td></tr><tr><td>Data transferred</td><td>0 KB</td></tr></table>"+
					"<table><tr><th>VM</th><th>Status</th><th>Notes</th></tr>"+
					"<tr><td>BR-DC1</td><td>Successful</td><td></td></tr>"+
					"<tr><td>BR-APP1</td><td>Failed</td><td>Cannot find the VM on host br-esx1.</td></tr>"+
					"<tr><td>BR-APP2</td><td>Failed</td><td>Transporter br-tr1 is unavailable.</td></tr></table>"),
			status: Warn, job: "Branch-VMs", summary: "BR-APP1: Cannot find the VM on host br-esx1. [also failed (1): BR-APP2]", size: wantBytes(0)},
		{name: "custom subject, status from the heading",
			raw: html("Backup report",
				"<div>NAKIVO Backup &amp; Replication &mdash; Job Report</div><div>Daily-M365</div><div><span>Completed with warnings</span></div>"+
					"<h3>Alerts</h3><ul><li>Mailbox anna@lakeshore.example.test was skipped: the mailbox is inactive.</li></ul>"),
			status: Warn, job: "Daily-M365", summary: "Mailbox anna@lakeshore.example.test was skipped: the mailbox is inactive."},
		{name: "screenshot verification failed in the subject only",
			raw: plain(`Job "Verify-Weekly" has completed: Successful`,
				"NAKIVO Backup & Replication\nVerify-Weekly\nJob status: Successful\nAlerts:\n- WEB2: Screenshot verification failed: the VM did not boot.\n"),
			status: OK, integrity: true, summary: "WEB2: Screenshot verification failed: the VM did not boot."},
		{name: "no status", raw: plain("NAKIVO Backup & Replication report",
			"NAKIVO Backup & Replication\nLicense usage: 12 of 20 sockets\nStarted: Tue, 3 Mar 2026 at 10:00:00 PM\n"),
			wantUnreadable: true},
	})
}

func TestNakivoOtherVendorNotSilentlyOK(t *testing.T) {
	for _, s := range []string{"emails/veeam/01-success.eml", "emails/datto/01-success.eml", "emails/synology/01-success.eml"} {
		notSilentlyOK(t, "nakivo", s, true)
	}
}
