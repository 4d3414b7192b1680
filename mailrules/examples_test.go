package mailrules

import (
	"os"
	"testing"
	"time"

	"backupmon/mailparse"
)

// The two worked examples of the README: products no parser reads.

// The rules of the README's worked examples: Bacula director job reports,
// and Proxmox VE vzdump reports (a plain-text table).
var (
	baculaRule  = mustRead("testdata/bacula-rule.json")
	proxmoxRule = mustRead("testdata/proxmox-rule.json")
)

func mustRead(name string) string {
	b, err := os.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func readSample(t *testing.T, name string) *mailparse.Message {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mailparse.Read(raw)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustDecode(t *testing.T, spec string) string {
	t.Helper()
	_, canon, err := Decode([]byte(spec))
	if err != nil {
		t.Fatalf("decode %s: %v", spec, err)
	}
	return canon
}

func TestWorkedExamples(t *testing.T) {
	paris, _ := time.LoadLocation("Europe/Paris")
	for _, tc := range []struct {
		name, rule, mail string
		want             mailparse.Result
	}{
		{"bacula", baculaRule, "bacula-failed.eml", mailparse.Result{
			JobName: "FileServer", Status: mailparse.Failed,
			StartedAt:   time.Date(2026, 3, 16, 23, 5, 2, 0, paris),
			CompletedAt: time.Date(2026, 3, 16, 23, 7, 45, 0, paris), DurationSeconds: 163,
			SizeBytes: 1234567890, Summary: `Write error on device "FileStorage": No space left on device`,
		}},
		{"proxmox", proxmoxRule, "proxmox-ok.eml", mailparse.Result{
			JobName: "mail01", Status: mailparse.OK,
			StartedAt:   time.Date(2026, 3, 17, 0, 1, 2, 0, time.UTC),
			CompletedAt: time.Date(2026, 3, 17, 2, 14, 9, 0, time.UTC), DurationSeconds: 7987,
			SizeBytes: 51808043008,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := NewSet([]string{mustDecode(t, tc.rule)})
			o := set.Read(readSample(t, tc.mail), true)
			if !o.Matched || o.Reason != "" {
				t.Fatalf("outcome %+v", o)
			}
			got := o.Reading.Result
			if got.JobName != tc.want.JobName || got.Status != tc.want.Status || !got.StartedAt.Equal(tc.want.StartedAt) ||
				!got.CompletedAt.Equal(tc.want.CompletedAt) || got.DurationSeconds != tc.want.DurationSeconds ||
				got.SizeBytes != tc.want.SizeBytes || got.Summary != tc.want.Summary {
				t.Fatalf("read\n%+v\nwant\n%+v\nfields %+v", got, tc.want, o.Reading.Fields)
			}
			// Without Override the rule leaves other vendors' jobs alone.
			if o := set.Read(readSample(t, tc.mail), false); o.Matched {
				t.Fatalf("a rule without override read a vendor's mail: %+v", o)
			}
		})
	}
}

func TestTryExplainsEmptyFields(t *testing.T) {
	r, _, err := Decode([]byte(`{"name": "x", "match": {"subject": {"contains": "vzdump"}},
	  "status": {"ok": ["successful"], "failed": ["failed"]},
	  "jobName": {"after": "Job name:"}, "size": {"after": "Total running time:"},
	  "completedAt": {"after": "End:", "format": "DD/MM/YYYY HH:mm"},
	  "error": {"regexp": "ERROR: (.*)"}}`))
	if err != nil {
		t.Fatal(err)
	}
	rd, err := Try(r, readSample(t, "proxmox-ok.eml"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]FieldReading{
		"status":      {Field: "status", Text: "successful", Value: "ok"},
		"jobName":     {Field: "jobName", Why: `no line of the body starts with "job name:"`},
		"completedAt": {Field: "completedAt", Text: "2026-03-17 02:14:09", Why: `"2026-03-17 02:14:09" does not read as a time (format "02/01/2006 15:04")`},
		"size":        {Field: "size", Text: "2h13m7s", Why: `no unit after the number in "2h13m7s": set size.unit`},
		"error":       {Field: "error", Why: `the regexp "ERROR: (.*)" matches nothing in the body`},
	}
	if !rd.Matched || rd.Status != "ok" || len(rd.Fields) != len(want) {
		t.Fatalf("reading %+v", rd)
	}
	for _, f := range rd.Fields {
		if f != want[f.Field] {
			t.Errorf("%s: got %+v, want %+v", f.Field, f, want[f.Field])
		}
	}
	r.Match.Subject.Contains = "bacula"
	if rd, _ := Try(r, readSample(t, "proxmox-ok.eml")); rd.Matched || rd.Why != `the subject does not contain "bacula"` {
		t.Fatalf("not matching: %+v", rd)
	}
}
