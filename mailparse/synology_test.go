package mailparse

import "testing"

func TestSynologyCases(t *testing.T) {
	from := `"NAS01" <nas01@acme.example>`
	date := "Thu, 19 Feb 2026 01:17:44 +0100"
	mail := func(subject, body string) []byte { return testMail(from, subject, date, "text/plain", body) }
	runMailCases(t, "synology", mail, []mailCase{
		{"a device whose name says failed is no result",
			"[NAS01] Active Backup for Business - Backup task PCs on Failover-PC completed successfully",
			"Dear user,\n\nThe backup task PCs on Failover-PC was successfully completed.\n\nTask: PCs\nDevice: Failover-PC\n",
			func(t *testing.T, r Result) {
				if r.Status != OK || r.JobName != "PCs" || r.Summary != "" {
					t.Errorf("got %s %q %q", r.Status, r.JobName, r.Summary)
				}
			}},
		{"no Task field: the task from the sentence; canceled",
			"[NAS01] Hyper Backup - Backup task USB-Copy was canceled",
			"Dear user,\n\nBackup task USB-Copy on NAS01 was canceled.\n\nThe destination USB disk was ejected.\n\nSincerely,\nSynology DiskStation NAS01\n",
			func(t *testing.T, r Result) {
				if r.Status != Failed || r.JobName != "USB-Copy" || r.Summary != "The destination USB disk was ejected." {
					t.Errorf("got %s %q %q", r.Status, r.JobName, r.Summary)
				}
			}},
		{"integrity check passed",
			"[NAS01] Hyper Backup - Integrity check of backup task Cloud completed",
			"Dear user,\n\nThe backup integrity check of task Cloud on NAS01 has completed.\n\nNo errors were found.\n\nTask: Cloud\n",
			func(t *testing.T, r Result) {
				if r.Status != OK || r.IntegrityFailed {
					t.Errorf("got %s %v", r.Status, r.IntegrityFailed)
				}
			}},
		{"task in brackets, device after the result, no fields",
			"[NAS01] Hyper Backup - Backup task [Offsite] failed on NAS01",
			"Dear user,\n\nBackup task [Offsite] failed on NAS01.\n\nThe destination could not be reached.\n",
			func(t *testing.T, r Result) {
				if r.Status != Failed || r.JobName != "Offsite" || r.Summary != "The destination could not be reached." {
					t.Errorf("got %s %q %q", r.Status, r.JobName, r.Summary)
				}
			}},
		{"integrity check completed but found damage",
			"[NAS01] Hyper Backup - Integrity check of backup task Cloud completed",
			"Dear user,\n\nThe backup integrity check of task Cloud on NAS01 has completed.\n\nErrors were found: version 12 is damaged.\n\nTask: Cloud\n",
			func(t *testing.T, r Result) {
				if r.Status != OK || !r.IntegrityFailed || r.Summary != "Errors were found: version 12 is damaged." {
					t.Errorf("got %s %v %q", r.Status, r.IntegrityFailed, r.Summary)
				}
			}},
		{"suspended is a warning",
			"[NAS01] Hyper Backup - Backup task Offsite on NAS01 was suspended",
			"Dear user,\n\nBackup task Offsite on NAS01 was suspended.\n\nThe connection to the destination was lost; the task resumes when it returns.\n\nTask: Offsite\n",
			func(t *testing.T, r Result) {
				if r.Status != Warn || r.Summary != "The connection to the destination was lost; the task resumes when it returns." {
					t.Errorf("got %s %q", r.Status, r.Summary)
				}
			}},
	})
}

func TestSynologyUnreadable(t *testing.T) {
	from := `"NAS01" <nas01@acme.example>`
	date := "Thu, 19 Feb 2026 01:17:44 +0100"
	mail := func(subject, body string) []byte { return testMail(from, subject, date, "text/plain", body) }
	runUnreadableCases(t, "synology", mail, []unreadableCase{
		{"a task that only started", "[NAS01] Hyper Backup - Backup task Offsite on NAS01 has started",
			"Dear user,\n\nBackup task Offsite on NAS01 has started.\n\nTask: Offsite\n"},
		{"a DSM notice without a task", "[NAS01] Volume 1 is running out of space",
			"Dear user,\n\nVolume 1 on NAS01 is running out of space.\n\nSincerely,\nSynology DiskStation NAS01\n"},
	})
}

func TestSynologyOtherVendorRefused(t *testing.T) {
	expectForeignRefused(t, "synology", "macrium/01-success.eml")
}
