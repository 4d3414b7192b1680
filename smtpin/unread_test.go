package smtpin

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// An unreadable e-mail is written to the mail store only once the engine's
// checks let it in: a resent copy (its Message-ID listed already) and one
// past the job's day of unreadable e-mails are answered as the checks say
// without writing anything, here to a store that can no longer write.
func TestUnreadableWrittenAfterChecks(t *testing.T) {
	f := start(t, nil)
	j, other := f.job("v", "veeam"), f.job("w", "veeam")
	unreadable := func(id string) []byte {
		return []byte("From: x@h.example\r\nSubject: hello\r\nMessage-ID: <" + id + "@h>\r\n\r\nnot a report\r\n")
	}
	c := f.dial()
	for i := range 100 {
		if _, err := transaction(c, []string{j.IngestAddress}, unreadable(fmt.Sprint("u", i))); err != nil {
			t.Fatalf("unreadable mail %d: %v", i, err)
		}
	}
	// The store breaks: its directory is now a file.
	if err := os.RemoveAll(f.mailDir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.mailDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		to   string
		mail []byte
		code int    // the DATA answer's code, 0 for 250
		want string // and its text
	}{
		{"resent", j.IngestAddress, unreadable("u7"), 0, ""},
		{"past the day's cap", j.IngestAddress, unreadable("u100"), 452, "4.2.2 " + msgDailyCap},
		{"new, to be kept", other.IngestAddress, unreadable("x1"), 451, "4.3.0 " + msgTryLater},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := transaction(c, []string{tc.to}, tc.mail)
			switch {
			case tc.code == 0 && err != nil:
				t.Fatalf("DATA: %v, want 250", err)
			case tc.code != 0 && (code(err) != tc.code || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("DATA: %v, want %d %s", err, tc.code, tc.want)
			}
		})
	}
	if l, _ := f.eng.Unparsed(f.ws); len(l) != 100 {
		t.Errorf("%d entries listed, want 100", len(l))
	}
	if n := f.count("duplicate/veeam"); n != 1 {
		t.Errorf("Observe counted %d duplicates, want 1", n)
	}
}
