package mailrules

import (
	"strings"
	"testing"
	"time"

	"backupmon/mailparse"
)

func TestDecodeRefuses(t *testing.T) {
	long := strings.Repeat("a", MaxPattern+1)
	for _, tc := range []struct{ name, spec, field string }{
		{"unknown member", `{"name":"x","match":{"subject":{"contains":"a"}},"status":{"ok":["ok"],"failed":["f"]},"colour":1}`, "body"},
		{"no name", `{"match":{"subject":{"contains":"a"}},"status":{"ok":["ok"],"failed":["f"]}}`, "name"},
		{"no match", `{"name":"x","match":{},"status":{"ok":["ok"],"failed":["f"]}}`, "match"},
		{"both tests", `{"name":"x","match":{"subject":{"contains":"a","regexp":"a"}},"status":{"ok":["ok"],"failed":["f"]}}`, "match.subject"},
		{"bad regexp", `{"name":"x","match":{"body":{"regexp":"(a"}},"status":{"ok":["ok"],"failed":["f"]}}`, "match.body.regexp"},
		{"long pattern", `{"name":"x","match":{"body":{"regexp":"` + long + `"}},"status":{"ok":["ok"],"failed":["f"]}}`, "match.body.regexp"},
		{"no ok words", `{"name":"x","match":{"body":{"contains":"a"}},"status":{"failed":["f"]}}`, "status.ok"},
		{"group-less field", `{"name":"x","match":{"body":{"contains":"a"}},"status":{"ok":["ok"],"failed":["f"]},"jobName":{"regexp":"Job: \\S+"}}`, "jobName.regexp"},
		{"two places", `{"name":"x","match":{"body":{"contains":"a"}},"status":{"ok":["ok"],"failed":["f"]},"error":{"after":"E","column":"E"}}`, "error"},
		{"bad zone", `{"name":"x","match":{"body":{"contains":"a"}},"status":{"ok":["ok"],"failed":["f"]},"startedAt":{"after":"S","zone":"Mars/Olympus"}}`, "startedAt.zone"},
		{"bad unit", `{"name":"x","match":{"body":{"contains":"a"}},"status":{"ok":["ok"],"failed":["f"]},"size":{"after":"S","unit":"parsecs"}}`, "size.unit"},
		{"route without job", `{"name":"x","match":{"body":{"contains":"a"}},"status":{"ok":["ok"],"failed":["f"]},"route":"jobName"}`, "route"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Decode([]byte(tc.spec))
			p, ok := err.(*Problem)
			if !ok || p.Field != tc.field {
				t.Fatalf("got %v (%T), want a problem with %s", err, err, tc.field)
			}
		})
	}
}

// A pattern that backtracking engines take exponential time on is linear
// in RE2: the mail is read well within the time per mail.
func TestCatastrophicLookingPattern(t *testing.T) {
	body := strings.Repeat("a", 20_000) + "!"
	m := &mailparse.Message{Subject: "nightly", Text: body, Zone: time.UTC}
	spec := mustDecode(t, `{"name":"evil","match":{"body":{"regexp":"^(a+)+$"}},"status":{"ok":["ok"],"failed":["failed"]}}`)
	start := time.Now()
	o := NewSet([]string{spec}).read(m, true, 10*time.Second)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %v", d) // a backtracking engine takes longer than the universe's age
	}
	if o.Matched {
		t.Fatalf("matched a body that ends in '!': %+v", o)
	}
}

// A rule that runs out of time leaves the mail unparsed with the reason,
// not read by a later rule or the vendor's parser.
func TestOutOfTime(t *testing.T) {
	var lines []string
	for range 3000 {
		lines = append(lines, strings.Repeat("abcde ", 20))
	}
	m := &mailparse.Message{Subject: "nightly ok", Text: strings.Join(lines, "\n"), Zone: time.UTC}
	slow := mustDecode(t, `{"name":"slow","match":{"body":{"regexp":"(?s)(.*a.*b){30}z"}},"status":{"ok":["ok"],"failed":["failed"]}}`)
	fast := mustDecode(t, `{"name":"fast","match":{"subject":{"contains":"nightly"}},"status":{"ok":["ok"],"failed":["failed"]}}`)
	o := NewSet([]string{slow, fast}).read(m, true, time.Millisecond)
	if !o.Matched || o.Reason != errOutOfTime() || o.Reading.Status != "" {
		t.Fatalf("outcome %+v", o)
	}
	if o := NewSet([]string{fast}).read(m, true, time.Second); !o.Matched || o.Reading.Status != "ok" {
		t.Fatalf("fast rule alone: %+v", o)
	}
}

func TestStatusWordsAreWords(t *testing.T) {
	spec := mustDecode(t, `{"name":"w","match":{"subject":{"contains":"job"}},"status":{"ok":["ok"],"warning":["warn"],"failed":["error"]}}`)
	for _, tc := range []struct{ subject, body, want string }{
		{"job ok", "0 errors", "ok"},
		{"job result", "Result: error", "failed"},
		{"job result", "warnings were ignored; ok", "ok"},
		{"job warn", "error", "warn"}, // the subject comes first
		{"job broken", "nothing", ""},
	} {
		t.Run(tc.subject+"/"+tc.body, func(t *testing.T) {
			o := NewSet([]string{spec}).Read(&mailparse.Message{Subject: tc.subject, Text: tc.body, Zone: time.UTC}, true)
			if !o.Matched || o.Reading.Status != tc.want {
				t.Fatalf("outcome %+v, want %q", o, tc.want)
			}
		})
	}
}
