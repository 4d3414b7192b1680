package notify

import (
	"strings"
	"testing"

	"backupmon/engine"
)

// TestSizeDropTexts: a size-drop notice reads as a notice about the job's
// size in Slack, in an e-mail's subject and in its body, never as an alert.
func TestSizeDropTexts(t *testing.T) {
	nt := engine.Notice{Event: engine.EventSizeDrop, ClientName: "Harbour Dental", JobName: "Nightly", AlertType: engine.SizeDropType,
		Severity: "warning", Summary: "size 92% below usual: 800.0 MB against a median of 10.0 GB over the last 10 successful runs"}
	tests := []struct{ name, got, want string }{
		{"slack", slackText(nt), "[warning] Notice: Backup size dropped on Harbour Dental / Nightly — size 92% below usual: 800.0 MB against a median of 10.0 GB over the last 10 successful runs"},
		{"subject", emailSubject(nt), "[backupmon] warning: Backup size dropped on Harbour Dental / Nightly (notice, no alert)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got  %q\nwant %q", tc.got, tc.want)
			}
		})
	}
	body := string(emailBody(nt))
	for _, want := range []string{"Notice: Backup size dropped on Harbour Dental / Nightly\n", "Event:      job.size_drop\n", "Alert type: size_drop\n", "\nAlert:\nnull\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("e-mail body lacks %q:\n%s", want, body)
		}
	}
}
