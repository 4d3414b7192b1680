package mailparse

import (
	"testing"
)

func TestDattoCases(t *testing.T) {
	runVendorCases(t, "datto", []vendorCase{
		{name: "screenshot verification succeeded",
			raw: dattoMail("Datto Alert: Screenshot Verification Successful - RV-DC01 on SIRIS-RV01",
				"Screenshot Verification Successful\nProtected machine: RV-DC01\nStatus: Screenshot Verification Successful\n"+
					"Screenshot taken: Feb 16, 2026 2:05:00 PM EST\n"),
			status: OK, end: "2026-02-16T19:05:00Z"},
		{name: "a backup alert whose screenshot field failed keeps the backup's status",
			raw: dattoMail("Datto Alert: Backup Successful - RV-DC01 on SIRIS-RV01",
				"Backup Successful\nProtected machine: RV-DC01\nStatus: Backup Successful\nScreenshot verification: Failed\n"+
					"Details:\nThe operating system did not boot.\n"),
			status: OK, integrity: true, summary: "The operating system did not boot."},
		{name: "machine from the subject, missed backup",
			raw:    dattoMail("Datto Alert: Backup Missed - RV-APP03 on SIRIS-RV01", "Datto BCDR Alert\nBackup Missed\nNo backup was taken in the scheduled window.\n"),
			status: Failed, job: "RV-APP03"},
	})
}

func TestDattoUnreadable(t *testing.T) {
	runUnreadableCases(t, "datto", dattoMail, []unreadableCase{
		{"queued, no result", "Datto Alert: Backup Queued - RV-DC01 on SIRIS-RV01",
			"Backup Queued\nProtected machine: RV-DC01\nStatus: Backup Queued\n"},
		{"an appliance notice", "Datto Alert: Storage Usage - SIRIS-RV01",
			"Datto BCDR Alert\nThe appliance's storage pool is 81% full.\n"},
	})
}

// dattoMail builds a Datto alert by its subject and body.
var dattoMail = plainMail(`"Datto Alerts" <noreply@datto.example>`, "Mon, 16 Feb 2026 14:07:11 -0500")

func TestDattoOtherVendorRefused(t *testing.T) {
	expectForeignRefused(t, "datto", "altaro/01-success.eml")
}
