package mailparse

import "testing"

func TestGenericCases(t *testing.T) {
	plain := plainMail("backup@host.example.test", "")
	runVendorCases(t, "generic", []vendorCase{
		{name: "subject Backup OK", raw: plain("Backup OK: etc-tar", "tar: Removing leading `/' from member names\n"),
			status: OK, job: "etc-tar"},
		{name: "subject bracketed FAILED", raw: plain("[FAILED] offsite-rsync", "rsync error: some files could not be transferred (code 23)\n"),
			status: Failed, job: "offsite-rsync"},
		{name: "subject SUCCESS alone, job from the body", raw: plain("SUCCESS", "Job: media-sync\nHost: nas02\n"),
			status: OK, job: "media-sync"},
		{name: "subject ERROR alone", raw: plain("ERROR", "Host: db07\nError: disk quota exceeded on /backup\n"),
			status: Failed, job: "db07", summary: "disk quota exceeded on /backup"},
		{name: "State label", raw: plain("nightly dump", "Task: dump-crm\nState: completed with errors\nMessage: 1 table skipped\n"),
			status: Warn, job: "dump-crm", summary: "1 table skipped"},
		{name: "exit code", raw: plain("cron: pg-backup", "Job: pg-backup\nExit code: 2\nError: could not connect to server\n"),
			status: Failed, summary: "could not connect to server"},
		{name: "Verification failed keeps ok", raw: plain("Backup OK: vault", "Job: vault\nStatus: OK\nVerification: failed\nMessage: restore test could not read snapshot 9\n"),
			status: OK, integrity: true, summary: "restore test could not read snapshot 9"},
		{name: "label says worse than subject", raw: plain("Backup OK: photos", "Status: FAILED\nError: target unreachable\n"),
			status: Failed, summary: "target unreachable"},
		{name: "zero errors is no error", raw: plain("Backup completed: 0 errors, 0 warnings", "Job: docs\nSize: 0\n"),
			status: OK, job: "docs", size: wantBytes(0)},
		{name: "HTML table", raw: testMail("x@y.example.test", "report", "", "text/html",
			"<table><tr><td>Job</td><td>web-files</td></tr><tr><td>Outcome</td><td>Success</td></tr><tr><td>Bytes</td><td>4096</td></tr></table>"),
			status: OK, job: "web-files", size: wantBytes(4096)},
		{name: "unknown status label under a completed subject", raw: plain("sync completed", "Status: Pending review\n"),
			wantUnreadable: true},
		{name: "no status anywhere", raw: plain("Weekly newsletter", "Hello,\nhere is our weekly newsletter.\n"),
			wantUnreadable: true},
		{name: "empty body", raw: []byte("From: a@b.example.test\r\nSubject: x\r\n\r\n"), wantUnreadable: true},
	})
}

func TestGenericOtherVendorNotSilentlyOK(t *testing.T) {
	// The generic parser reads anything with a status, so it is only held
	// to never turning another product's failure or warning into ok.
	for _, s := range []string{"emails/veeam/03-failed.eml", "emails/datto/02-warning.eml", "emails/acronis/03-failed.eml"} {
		notSilentlyOK(t, "generic", s, false)
	}
}
