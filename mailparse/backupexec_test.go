package mailparse

import "testing"

func TestBackupExecCases(t *testing.T) {
	plain := plainMail(`"Backup Exec" <bex@harbourline.example.test>`, "")
	status := func(st string) string {
		return "(Server: \"HL-BE1\") (Job: \"HL-FS Backup\") HL-FS Backup\nJob Information\nJob name: HL-FS Backup\n" +
			"Job started: Tuesday, March 3, 2026 at 10:00:00 PM\nJob ended: Tuesday, March 3, 2026 at 10:30:00 PM\n" +
			"Job completion status: " + st + "\n"
	}
	runVendorCases(t, "backupexec", []vendorCase{
		{name: "status only in the subject",
			raw: plain(`Backup Exec Alert: Job Failed (Server: "HL-BE1") (Job: "HL-SQL Backup")`,
				"(Server: \"HL-BE1\") (Job: \"HL-SQL Backup\") HL-SQL Backup -- The job failed with the following error: Access is denied.\n"),
			status: Failed, job: "HL-SQL Backup", summary: "Access is denied."},
		{name: "succeeded with exceptions", raw: plain("Backup Exec Alert: Job Completed with Exceptions", status("Succeeded with exceptions")),
			status: Warn, job: "HL-FS Backup"},
		{name: "failed over", raw: plain("Backup Exec Alert", status("Failed over")), status: Warn},
		{name: "missed", raw: plain("Backup Exec Alert", status("Missed")), status: Failed},
		{name: "recovered", raw: plain("Backup Exec Alert", status("Recovered")), status: Failed},
		{name: "final error as summary",
			raw:    plain("Backup Exec Alert: Job Failed", status("Failed")+"Final error: 0xe000846b - The resource could not be backed up because the device is offline.\n"),
			status: Failed, summary: "The resource could not be backed up because the device is offline."},
		{name: "failed verify job",
			raw: plain(`Backup Exec Alert: Job Failed (Server: "HL-BE1") (Job: "HL-FS Verify")`,
				"Job name: HL-FS Verify\nJob type: Verify\nJob completion status: Failed\nFinal error: 0xe0008488 - Access is denied.\n"),
			status: Failed, job: "HL-FS Verify", integrity: true, summary: "Access is denied."},
		{name: "a media alert is not a job result",
			raw: plain(`Backup Exec Alert: Media Insert (Server: "HL-BE1")`,
				"Please insert overwritable media into the robotic library slot 4.\n"),
			wantUnreadable: true},
	})
}

func TestBackupExecOtherVendorNotSilentlyOK(t *testing.T) {
	for _, s := range []string{"emails/nakivo/01-success.eml", "emails/veeam/01-success.eml", "emails/acronis/01-success.eml"} {
		notSilentlyOK(t, "backupexec", s, true)
	}
}
