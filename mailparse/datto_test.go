package mailparse

import (
	"testing"
	"time"
)

func TestDattoCases(t *testing.T) {
	from := `"Datto Alerts" <noreply@datto.example>`
	date := "Mon, 16 Feb 2026 14:07:11 -0500"
	mail := func(subject, body string) []byte { return testMail(from, subject, date, "text/plain", body) }
	runMailCases(t, "datto", mail, []mailCase{
		{"screenshot verification succeeded",
			"Datto Alert: Screenshot Verification Successful - RV-DC01 on SIRIS-RV01",
			"Screenshot Verification Successful\nProtected machine: RV-DC01\nStatus: Screenshot Verification Successful\n" +
				"Screenshot taken: Feb 16, 2026 2:05:00 PM EST\n",
			func(t *testing.T, r Result) {
				if r.Status != OK || r.IntegrityFailed || r.Summary != "" {
					t.Errorf("got %s %v %q", r.Status, r.IntegrityFailed, r.Summary)
				}
				if r.CompletedAt.UTC().Format(time.RFC3339) != "2026-02-16T19:05:00Z" {
					t.Errorf("end %s", r.CompletedAt.UTC())
				}
			}},
		{"a backup alert whose screenshot field failed keeps the backup's status",
			"Datto Alert: Backup Successful - RV-DC01 on SIRIS-RV01",
			"Backup Successful\nProtected machine: RV-DC01\nStatus: Backup Successful\nScreenshot verification: Failed\n" +
				"Details:\nThe operating system did not boot.\n",
			func(t *testing.T, r Result) {
				if r.Status != OK || !r.IntegrityFailed || r.Summary != "The operating system did not boot." {
					t.Errorf("got %s %v %q", r.Status, r.IntegrityFailed, r.Summary)
				}
			}},
		{"machine from the subject, missed backup",
			"Datto Alert: Backup Missed - RV-APP03 on SIRIS-RV01",
			"Datto BCDR Alert\nBackup Missed\nNo backup was taken in the scheduled window.\n",
			func(t *testing.T, r Result) {
				if r.JobName != "RV-APP03" || r.Status != Failed {
					t.Errorf("got %q %s", r.JobName, r.Status)
				}
			}},
	})
}

func TestDattoUnreadable(t *testing.T) {
	from := `"Datto Alerts" <noreply@datto.example>`
	date := "Mon, 16 Feb 2026 14:07:11 -0500"
	mail := func(subject, body string) []byte { return testMail(from, subject, date, "text/plain", body) }
	runUnreadableCases(t, "datto", mail, []unreadableCase{
		{"queued, no result", "Datto Alert: Backup Queued - RV-DC01 on SIRIS-RV01",
			"Backup Queued\nProtected machine: RV-DC01\nStatus: Backup Queued\n"},
		{"an appliance notice", "Datto Alert: Storage Usage - SIRIS-RV01",
			"Datto BCDR Alert\nThe appliance's storage pool is 81% full.\n"},
	})
}

func TestDattoOtherVendorRefused(t *testing.T) {
	expectForeignRefused(t, "datto", "altaro/01-success.eml")
}
