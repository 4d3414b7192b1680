package mailparse

import (
	"errors"
	"strings"
	"testing"
)

// coveMail builds a Cove notification by its subject and body.
var coveMail = plainMail(`"Cove Data Protection" <noreply@backup.management.example>`, "Wed, 18 Feb 2026 20:23:22 +0100")

func TestCoveCases(t *testing.T) {
	mail := coveMail
	runVendorCases(t, "cove", []vendorCase{
		{name: "over quota is a failure",
			raw: mail("[Cove] Backup Over quota - acme-srv01 (ACME)",
				"Device name: acme-srv01\nSession type: Backup\nStatus: Over quota\nStart time: 2026-02-18 20:00:00\n"+
					"End time: 2026-02-18 20:01:00\nSent size: 0 B\nErrors:\nThe storage quota of the device is used up.\n"),
			status: Failed, size: wantBytes(0), summary: "The storage quota of the device is used up.", duration: wantSeconds(60)},
		{name: "no selection is a warning; device from the subject",
			raw:    mail("[Cove] Backup No selection - acme-ws07 (ACME)", "Session type: Backup\nStatus: No selection\n"),
			status: Warn, job: "acme-ws07"},
		{name: "interrupted is a failure",
			raw:    mail("[Cove] Backup Interrupted - acme-ws08 (ACME)", "Device name: acme-ws08\nSession type: Backup\nStatus: Interrupted\n"),
			status: Failed},
	})
}

func TestCoveUnreadable(t *testing.T) {
	cases := []struct{ name, subject, body, reason string }{
		{"a session still in process", "[Cove] Backup In process - acme-srv01 (ACME)",
			"Device name: acme-srv01\nSession type: Backup\nStatus: In process\n", "in process"},
		{"no status anywhere", "[Cove] Session report - acme-srv01",
			"Device name: acme-srv01\nSession type: Backup\n", "status"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := coveMail(c.subject, c.body)
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
