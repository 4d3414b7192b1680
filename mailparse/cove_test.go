package mailparse

import (
	"errors"
	"strings"
	"testing"
)

func TestCoveCases(t *testing.T) {
	from := `"Cove Data Protection" <noreply@backup.management.example>`
	date := "Wed, 18 Feb 2026 20:23:22 +0100"
	mail := func(subject, body string) []byte { return testMail(from, subject, date, "text/plain", body) }
	runMailCases(t, "cove", mail, []mailCase{
		{"over quota is a failure",
			"[Cove] Backup Over quota - acme-srv01 (ACME)",
			"Device name: acme-srv01\nSession type: Backup\nStatus: Over quota\nStart time: 2026-02-18 20:00:00\n" +
				"End time: 2026-02-18 20:01:00\nSent size: 0 B\nErrors:\nThe storage quota of the device is used up.\n",
			func(t *testing.T, r Result) {
				if r.Status != Failed || r.SizeBytes != 0 || r.Summary != "The storage quota of the device is used up." {
					t.Errorf("got %s size %d %q", r.Status, r.SizeBytes, r.Summary)
				}
				if r.DurationSeconds != 60 {
					t.Errorf("duration %d", r.DurationSeconds)
				}
			}},
		{"no selection is a warning; device from the subject",
			"[Cove] Backup No selection - acme-ws07 (ACME)",
			"Session type: Backup\nStatus: No selection\n",
			func(t *testing.T, r Result) {
				if r.Status != Warn || r.JobName != "acme-ws07" {
					t.Errorf("got %s %q", r.Status, r.JobName)
				}
			}},
		{"interrupted is a failure",
			"[Cove] Backup Interrupted - acme-ws08 (ACME)",
			"Device name: acme-ws08\nSession type: Backup\nStatus: Interrupted\n",
			func(t *testing.T, r Result) {
				if r.Status != Failed {
					t.Errorf("got %s", r.Status)
				}
			}},
	})
}

func TestCoveUnreadable(t *testing.T) {
	from := `"Cove Data Protection" <noreply@backup.management.example>`
	date := "Wed, 18 Feb 2026 20:23:22 +0100"
	cases := []struct{ name, subject, body, reason string }{
		{"a session still in process", "[Cove] Backup In process - acme-srv01 (ACME)",
			"Device name: acme-srv01\nSession type: Backup\nStatus: In process\n", "in process"},
		{"no status anywhere", "[Cove] Session report - acme-srv01",
			"Device name: acme-srv01\nSession type: Backup\n", "status"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := testMail(from, c.subject, date, "text/plain", c.body)
			expectUnreadable(t, "cove", raw)
			_, _, err := Parse("cove", raw)
			var ue *UnreadableError
			if errors.As(err, &ue) && !strings.Contains(ue.Reason, c.reason) {
				t.Errorf("reason %q does not say %q", ue.Reason, c.reason)
			}
		})
	}
}

func TestCoveOtherVendorRefused(t *testing.T) {
	expectForeignRefused(t, "cove", "acronis/01-success.eml")
}
