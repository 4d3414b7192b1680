package mailparse

import "testing"

func TestSynologyCases(t *testing.T) {
	runVendorCases(t, "synology", []vendorCase{
		{name: "a device whose name says failed is no result",
			raw: synologyMail("[NAS01] Active Backup for Business - Backup task PCs on Failover-PC completed successfully",
				"Dear user,\n\nThe backup task PCs on Failover-PC was successfully completed.\n\nTask: PCs\nDevice: Failover-PC\n"),
			status: OK, job: "PCs"},
		{name: "no Task field: the task from the sentence; canceled",
			raw: synologyMail("[NAS01] Hyper Backup - Backup task USB-Copy was canceled",
				"Dear user,\n\nBackup task USB-Copy on NAS01 was canceled.\n\nThe destination USB disk was ejected.\n\nSincerely,\nSynology DiskStation NAS01\n"),
			status: Failed, job: "USB-Copy", summary: "The destination USB disk was ejected."},
		{name: "integrity check passed",
			raw: synologyMail("[NAS01] Hyper Backup - Integrity check of backup task Cloud completed",
				"Dear user,\n\nThe backup integrity check of task Cloud on NAS01 has completed.\n\nNo errors were found.\n\nTask: Cloud\n"),
			status: OK},
		{name: "task in brackets, device after the result, no fields",
			raw: synologyMail("[NAS01] Hyper Backup - Backup task [Offsite] failed on NAS01",
				"Dear user,\n\nBackup task [Offsite] failed on NAS01.\n\nThe destination could not be reached.\n"),
			status: Failed, job: "Offsite", summary: "The destination could not be reached."},
		{name: "integrity check completed but found damage",
			raw: synologyMail("[NAS01] Hyper Backup - Integrity check of backup task Cloud completed",
				"Dear user,\n\nThe backup integrity check of task Cloud on NAS01 has completed.\n\nErrors were found: version 12 is damaged.\n\nTask: Cloud\n"),
			status: OK, integrity: true, summary: "Errors were found: version 12 is damaged."},
		{name: "suspended is a warning",
			raw: synologyMail("[NAS01] Hyper Backup - Backup task Offsite on NAS01 was suspended",
				"Dear user,\n\nBackup task Offsite on NAS01 was suspended.\n\nThe connection to the destination was lost; the task resumes when it returns.\n"),
			status: Warn, summary: "The connection to the destination was lost; the task resumes when it returns."},
	})
}

func TestSynologyUnreadable(t *testing.T) {
	runUnreadableCases(t, "synology", synologyMail, []unreadableCase{
		{"a task that only started", "[NAS01] Hyper Backup - Backup task Offsite on NAS01 has started",
			"Dear user,\n\nBackup task Offsite on NAS01 has started.\n\nTask: Offsite\n"},
		{"a DSM notice without a task", "[NAS01] Volume 1 is running out of space",
			"Dear user,\n\nVolume 1 on NAS01 is running out of space.\n\nSincerely,\nSynology DiskStation NAS01\n"},
	})
}

// synologyMail builds a DSM notification by its subject and body.
var synologyMail = plainMail(`"NAS01" <nas01@acme.example>`, "Thu, 19 Feb 2026 01:17:44 +0100")

func TestSynologyOtherVendorRefused(t *testing.T) {
	expectForeignRefused(t, "synology", "macrium/01-success.eml")
}
