package mailparse

import (
	"testing"
	"time"
)

func TestAcronisCases(t *testing.T) {
	from := `"Acronis Cyber Protect Cloud" <noreply@acronis.example>`
	cases := []struct {
		name, subject, date, body string
		check                     func(t *testing.T, r Result)
	}{
		{"Spanish, day-first dates decided by the Date header",
			"Copia de seguridad correcta con advertencias: PC-07 - Plan diario", "Wed, 04 Mar 2026 12:00:00 +0100",
			"Carga de trabajo: PC-07\nPlan de protección: Plan diario\nEstado: Correcto con advertencias\n" +
				"Hora de inicio: 04/03/2026 11:00:00 (UTC+01:00)\nHora de finalización: 04/03/2026 11:30:00 (UTC+01:00)\n" +
				"Tamaño de la copia de seguridad: 512 MB\nAdvertencias:\n- Se omitieron 2 archivos bloqueados.\n",
			func(t *testing.T, r Result) {
				if r.JobName != "Plan diario" || r.Status != Warn || r.Summary != "Se omitieron 2 archivos bloqueados." {
					t.Errorf("got %q %s %q", r.JobName, r.Status, r.Summary)
				}
				if r.StartedAt.UTC().Format(time.RFC3339) != "2026-03-04T10:00:00Z" || r.DurationSeconds != 1800 {
					t.Errorf("start %s, duration %d", r.StartedAt.UTC(), r.DurationSeconds)
				}
			}},
		{"no Status field: the headline and subject say it; plan from the subject",
			"Backup failed: WS-01 - Laptops - hourly", "Wed, 04 Mar 2026 12:00:00 +0000",
			"Backup failed\nWorkload: WS-01\nError: The machine is offline.\n",
			func(t *testing.T, r Result) {
				if r.JobName != "Laptops - hourly" || r.Status != Failed || r.Summary != "The machine is offline." {
					t.Errorf("got %q %s %q", r.JobName, r.Status, r.Summary)
				}
				if r.SizeBytes != -1 || r.DurationSeconds != -1 || !r.StartedAt.IsZero() {
					t.Errorf("size %d, duration %d, start %s: want none", r.SizeBytes, r.DurationSeconds, r.StartedAt)
				}
			}},
		{"a long error wrapped in the text body",
			"Backup failed: WS-02 - Laptops", "Wed, 04 Mar 2026 12:00:00 +0000",
			"Backup failed\nWorkload: WS-02\nProtection plan: Laptops\nStatus: Failed\nErrors:\n" +
				"- The backup location 'Cloud storage' is not reachable: the connection to\n" +
				"  the data center timed out after 300 seconds.\n" +
				"- A second error.\n\nGo to the console: https://cloud.acronis.example/\n",
			func(t *testing.T, r Result) {
				want := "The backup location 'Cloud storage' is not reachable: the connection to the data center timed out after 300 seconds."
				if r.Summary != want {
					t.Errorf("summary %q, want %q", r.Summary, want)
				}
			}},
		{"success keeps no summary",
			"Backup succeeded: SRV - Nightly", "Wed, 04 Mar 2026 12:00:00 +0000",
			"Workload: SRV\nProtection plan: Nightly\nStatus: Succeeded\nBackup size: 0 B\nDetails:\n- 0 errors\n",
			func(t *testing.T, r Result) {
				if r.Status != OK || r.Summary != "" || r.SizeBytes != 0 {
					t.Errorf("got %s %q size %d", r.Status, r.Summary, r.SizeBytes)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, _, err := Parse("acronis", testMail(from, c.subject, c.date, "text/plain", c.body))
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, r)
		})
	}
}

func TestAcronisUnreadable(t *testing.T) {
	from := `"Acronis Cyber Protect Cloud" <noreply@acronis.example>`
	date := "Wed, 04 Mar 2026 12:00:00 +0000"
	mail := func(subject, body string) []byte { return testMail(from, subject, date, "text/plain", body) }
	runUnreadableCases(t, "acronis", mail, []unreadableCase{
		{"status neither stated nor in the headline", "Backup notification: WS-01 - Plan",
			"Backup notification\nWorkload: WS-01\nProtection plan: Plan\nStatus: Pending\n"},
		{"a quota notice", "Quota exceeded: Customer A", "Your storage quota is almost used up.\nWorkload: WS-01\n"},
	})
}

func TestAcronisOtherVendorRefused(t *testing.T) {
	expectForeignRefused(t, "acronis", "msp360/01-success.eml")
}

func TestAcronisIntegrityWords(t *testing.T) {
	cases := []struct {
		msg  string
		want bool
	}{
		{"The backup archive 'A' is corrupted: checksum mismatch in 3 data blocks.", true},
		{"Validation failed: the recovery point cannot be read.", true},
		{"Die Sicherung ist beschädigt.", true},
		{"La vérification a échoué.", true},
		{"The file C:\\data\\x.pst is corrupt and was skipped.", false},
		{"The backup location 'Cloud storage' is not reachable.", false},
	}
	for _, c := range cases {
		t.Run(c.msg, func(t *testing.T) {
			if got := acronisIntegrityRe.MatchString(c.msg); got != c.want {
				t.Errorf("integrity(%q) = %v, want %v", c.msg, got, c.want)
			}
		})
	}
}
