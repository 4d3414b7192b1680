package mailparse

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestObjectsSummary holds objectsSummary to the format of decisions.md
// ("Report e-mails"): the first failed object (else the first that
// warned) leads with its own text, then the others that failed and warned.
func TestObjectsSummary(t *testing.T) {
	long := strings.Repeat("The repository did not answer in time. ", 20)
	many := make([]object, 0, 30)
	many = append(many, object{"SQL-01", Failed, "Snapshot failed."})
	for i := range 14 {
		many = append(many, object{"FILESERVER-" + itoa(i), Failed, "Other."})
		many = append(many, object{"WORKSTATION-" + itoa(i), Warn, "Skipped a file."})
	}
	cases := []struct {
		name     string
		objs     []object
		fallback string
		want     string
		ok       bool
	}{
		{"a failure printed after a warning leads", []object{
			{"DC01", OK, ""}, {"EX01", Warn, "Warning: Logs not truncated."}, {"SQL01", Failed, "Error: VSS writer failed."}, {"FS02", Warn, "CBT off."},
		}, "", "SQL01: VSS writer failed. [also warned (2): EX01, FS02]", true},
		{"the first of several failures leads", []object{
			{"A1", Failed, "Disk full."}, {"A2", Failed, "Timeout."}, {"A3", Warn, "Slow."},
		}, "", "A1: Disk full. [also failed (1): A2; warned (1): A3]", true},
		{"warnings only", []object{{"W1", Warn, "One."}, {"W2", Warn, "Two."}, {"OK1", OK, ""}}, "", "W1: One. [also warned (1): W2]", true},
		{"a text that already names the object keeps its words", []object{
			{"KV-FS02", Failed, "KV-FS02: share gone."}, {"KV-DC01", Warn, "x y z"},
		}, "", "KV-FS02: share gone. [also warned (1): KV-DC01]", true},
		{"a lead without text takes the fallback", []object{{"B1", Failed, ""}, {"B2", Warn, "w"}}, "Job error.", "B1: Job error. [also warned (1): B2]", true},
		{"a lead without any text says its result", []object{{"B1", Failed, ""}, {"B2", Failed, "x"}}, "", "B1: failed [also failed (1): B2]", true},
		{"the same object twice counts once", []object{
			{"VM1", Failed, ""}, {"VM2", Warn, "w"}, {"vm1", Failed, "from the alerts list"},
		}, "", "VM1: from the alerts list [also warned (1): VM2]", true},
		{"a long lead text is cut so the list fits", []object{{"L1", Failed, long}, {"L2", Warn, "w"}}, "",
			"L1: " + Truncate(strings.TrimSpace(long), MaxSummary-len("L1: ")-len(" [also warned (1): L2]")) + " [also warned (1): L2]", true},
		{"one problem object: the parser's own summary stands", []object{{"A", OK, ""}, {"B", Failed, "x"}}, "", "", false},
		{"every object failed with the same text: one cause", []object{{"A", Failed, "Error: Repo down."}, {"B", Failed, "Repo down."}}, "", "", false},
		{"the same text but a success beside them is still named", []object{
			{"A", Failed, "Repo down."}, {"B", Failed, "Repo down."}, {"C", OK, ""},
		}, "", "A: Repo down. [also failed (1): B]", true},
		{"no objects", nil, "x", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := objectsSummary(c.objs, c.fallback)
			if ok != c.ok || got != c.want {
				t.Errorf("objectsSummary = %q, %v\n want %q, %v", got, ok, c.want, c.ok)
			}
		})
	}
	t.Run("many others are counted, named as far as they fit", func(t *testing.T) {
		got, ok := objectsSummary(many, "")
		if !ok || !strings.HasPrefix(got, "SQL-01: Snapshot failed. [also failed (14): FILESERVER-0, ") ||
			!strings.Contains(got, "; warned (14): WORKSTATION-0, ") || !strings.Contains(got, " more") || !strings.HasSuffix(got, " more]") {
			t.Fatalf("objectsSummary = %q, %v", got, ok)
		}
		if n := utf8.RuneCountInString(got); n > MaxSummary {
			t.Errorf("%d characters", n)
		}
		if n := utf8.RuneCountInString(got[strings.Index(got, " [also"):]); n > maxOthers {
			t.Errorf("the list of others is %d characters, over %d", n, maxOthers)
		}
	})
}
