package mailrules

import (
	"testing"

	"backupmon/mailparse"
)

// FuzzRule feeds rules and mails from outside: Decode never panics, a rule
// it keeps decodes again to the same JSON, and reading any mail with it
// stays within its bounds.
func FuzzRule(f *testing.F) {
	f.Add(baculaRule, "Subject: Bacula: Backup OK\r\nFrom: bacula@x\r\n\r\nTermination: Backup OK\r\nJob: A.2026-\r\n")
	f.Add(proxmoxRule, "Subject: vzdump backup status\r\n\r\nVMID  Name  Status\r\n1  a  ok\r\n")
	f.Add(`{"name":"x","match":{"body":{"regexp":"(a|b)*c"}},"status":{"ok":["ok"],"failed":["f"]},"size":{"regexp":"(\\d+)","grouping":"."}}`, "Subject: x\r\n\r\nabc 1.234,5 GB ok\r\n")
	f.Fuzz(func(t *testing.T, spec, raw string) {
		r, canon, err := Decode([]byte(spec))
		if err != nil {
			if _, ok := err.(*Problem); !ok {
				t.Fatalf("error %T: %v", err, err)
			}
			return
		}
		if _, again, err := Decode([]byte(canon)); err != nil || again != canon {
			t.Fatalf("canonical JSON %s decodes to %s, %v", canon, again, err)
		}
		m, err := mailparse.Read([]byte(raw))
		if err != nil {
			return
		}
		if _, err := Try(r, m); err != nil {
			t.Fatal(err)
		}
		o := NewSet([]string{canon}).Read(m, true)
		if o.Matched && o.Reading.Status != "" && o.Reading.Result.Status == mailparse.Unknown {
			t.Fatalf("a status word read without a status: %+v", o)
		}
		for _, fr := range o.Reading.Fields {
			if len(fr.Text) > maxValueBytes+3 {
				t.Fatalf("field %s kept %d bytes", fr.Field, len(fr.Text))
			}
		}
	})
}
