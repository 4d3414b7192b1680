package mailparse

import (
	"testing"
	"time"
)

// Tests of the decoding the parsers share: sizes, durations, times,
// status words and the line helpers.

func TestParseSize(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"6.84 GB", 7344394076, true},
		{"3,42 GB", 3672197038, true}, // decimal comma
		{"1,234.5 MB", 1294467072, true},
		{"1.234,5 MB", 1294467072, true}, // the same size in the other convention
		{"1 234,5 MB", 1294467072, true},
		{"12'345 MB", 12944670720, true},
		{"412 MB", 432013312, true},
		{"1,21 TB", 1330409069609, true},
		{"640,30 MB", 671403213, true},
		{"18,3 Go", 19649475379, true}, // French octets
		{"512 KiB", 524288, true},
		{"2.5 TiB", 2748779069440, true},
		{"20.7 GB", 22226455757, true},
		{"0.5 GB", 536870912, true},
		{"184,302,118,912 bytes", 184302118912, true},
		{"184.302.118.912 Bytes", 184302118912, true},
		{"1.2 TB (1,319,413,953,331 bytes)", 1319413953331, true}, // exact bytes win
		{"4,096 bytes", 4096, true},
		{"0 B", 0, true},
		{"0 bytes", 0, true},
		{"-", 0, false},
		{"n/a", 0, false},
		{"", 0, false},
		{"1.4x", 0, false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, ok := ParseSize(c.in)
			if ok != c.ok || got != c.want {
				t.Errorf("ParseSize(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
			}
		})
	}
}

func TestParseDuration(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0:18:35", 1115, true},
		{"01:14:35", 4475, true},
		{"00:02:36", 156, true},
		{"100:00:00", 360000, true},
		{"1.02:03:04", 93784, true}, // days.hours:minutes:seconds
		{"1d 02:00:00", 93600, true},
		{"24 min 47 sec", 1487, true},
		{"1 hour, 14 minutes, and 35 seconds", 4475, true},
		{"6 minutes 33 seconds", 393, true},
		{"1 minute 17 seconds", 77, true},
		{"42s", 42, true},
		{"750s", 750, true},
		{"1h 2m 3s", 3723, true},
		{"2 h 30 min", 9000, true},
		{"47 Min. 28 Sek.", 2848, true},
		{"1 Std. 24 Min. 36 Sek.", 5076, true},
		{"11 min 10 s", 670, true},
		{"3 jours 2 heures", 266400, true},
		{"1 dag 3 uur", 97200, true},
		{"", 0, false},
		{"n/a", 0, false},
		{"soon", 0, false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, ok := ParseDuration(c.in)
			if ok != c.ok || got != c.want {
				t.Errorf("ParseDuration(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
			}
		})
	}
}

func TestParseTime(t *testing.T) {
	cet := time.FixedZone("+0100", 3600)
	est := time.FixedZone("-0500", -5*3600)
	cst := time.FixedZone("-0600", -6*3600)
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			panic(err)
		}
		return v
	}
	none := time.Time{}
	cases := []struct {
		name string
		in   string
		zone *time.Location
		ref  time.Time
		want string // RFC 3339 UTC; "" for no time
	}{
		{"US 12-hour with offset", "2/12/2026 11:00:04 PM (UTC+01:00)", time.UTC, none, "2026-02-12T22:00:04Z"},
		{"day-first 24-hour", "21/02/2026 23:00:02", cet, none, "2026-02-21T22:00:02Z"},
		{"month name, zone abbreviation ignored", "Feb 16, 2026 2:00:12 PM EST", est, none, "2026-02-16T19:00:12Z"},
		{"weekday, month name, at", "Wednesday, February 25, 2026 at 8:00:02 PM", cst, none, "2026-02-26T02:00:02Z"},
		{"offset with space", "Tue, 24 Feb 2026 at 1:00:03 AM (UTC -05:00)", time.UTC, none, "2026-02-24T06:00:03Z"},
		{"ISO", "2026-02-18 20:00:12", cet, none, "2026-02-18T19:00:12Z"},
		{"ISO with T and offset", "2026-03-11T02:00:03+01:00", time.UTC, none, "2026-03-11T01:00:03Z"},
		{"Veeam session line", "Tuesday, 10 February 2026 22:00:07", cet, none, "2026-02-10T21:00:07Z"},
		{"German month", "16. Februar 2026 14:00:12", cet, none, "2026-02-16T13:00:12Z"},
		{"German weekday and month", "Mittwoch, 11. März 2026 02:00:03", cet, none, "2026-03-11T01:00:03Z"},
		{"French", "mercredi 11 mars 2026 02:00:03", cet, none, "2026-03-11T01:00:03Z"},
		{"Dutch", "11 maart 2026 02:00:03", cet, none, "2026-03-11T01:00:03Z"},
		{"Spanish", "martes, 10 de marzo de 2026 22:00:07", cet, none, "2026-03-10T21:00:07Z"},
		{"Italian", "10 marzo 2026 22:00:07", cet, none, "2026-03-10T21:00:07Z"},
		{"dotted without seconds", "14.01.2026 09:12", time.UTC, none, "2026-01-14T09:12:00Z"},
		{"two-digit year", "09.03.26 06:00", time.UTC, none, "2026-03-09T06:00:00Z"},
		{"German with offset", "10.03.2026 22:00:03 (UTC+01:00)", time.UTC, at("2026-03-10T21:48:10Z"), "2026-03-10T21:00:03Z"},
		{"midnight in 12-hour", "Mar 3, 2026 12:03:41 AM MST", time.FixedZone("-0700", -7*3600), none, "2026-03-03T07:03:41Z"},
		{"noon in 12-hour", "3/3/2026 12:03:41 PM", time.UTC, none, "2026-03-03T12:03:41Z"},
		{"unambiguous day-first", "13/03/2026 08:00", time.UTC, none, "2026-03-13T08:00:00Z"},
		{"unambiguous month-first", "03/13/2026 8:00 AM", time.UTC, none, "2026-03-13T08:00:00Z"},
		// 03/04 reads as 3 April or March 4: the Date header decides, else the clock's style.
		{"ambiguous, ref says month-first", "03/04/2026 10:00:00", time.UTC, at("2026-03-04T10:30:00Z"), "2026-03-04T10:00:00Z"},
		{"ambiguous, ref says day-first", "03/04/2026 10:00:00", time.UTC, at("2026-04-03T10:30:00Z"), "2026-04-03T10:00:00Z"},
		{"ambiguous, 24-hour reads day-first", "03/04/2026 10:00:00", time.UTC, none, "2026-04-03T10:00:00Z"},
		{"ambiguous, 12-hour reads month-first", "03/04/2026 10:00:00 AM", time.UTC, none, "2026-03-04T10:00:00Z"},
		{"ambiguous, dotted reads day-first", "03.04.2026 10:00", time.UTC, none, "2026-04-03T10:00:00Z"},
		{"no date", "22:00:07", time.UTC, none, ""},
		{"no time", "2026-03-04", time.UTC, none, ""},
		{"impossible hour", "2026-03-04 25:00:00", time.UTC, none, ""},
		{"impossible day", "2026-02-30 10:00", time.UTC, none, ""},
		{"words", "no date here", time.UTC, none, ""},
		{"nil zone", "2026-02-18 20:00:12", nil, none, "2026-02-18T20:00:12Z"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := ParseTime(c.in, c.zone, c.ref)
			if c.want == "" {
				if ok {
					t.Errorf("ParseTime(%q) = %s, want no time", c.in, got.UTC().Format(time.RFC3339))
				}
				return
			}
			if !ok || !got.Equal(at(c.want)) {
				t.Errorf("ParseTime(%q) = %s, %v; want %s", c.in, got.UTC().Format(time.RFC3339), ok, c.want)
			}
		})
	}
}

func TestParseClock(t *testing.T) {
	day := time.Date(2026, 3, 9, 0, 0, 0, 0, time.FixedZone("+0100", 3600))
	cases := []struct {
		in   string
		want string // HH:MM:SS on day; "" for none
	}{
		{"22:00:41", "22:00:41"},
		{"1:00:40 AM", "01:00:40"},
		{"12:30 PM", "12:30:00"},
		{"12:05:00 am", "00:05:00"},
		{"6:19:50 p.m.", "18:19:50"},
		{"23:59:60", "23:59:59"}, // a leap second, read as ParseTime reads it
		{"24:00:00", ""},
		{"-", ""},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, ok := ParseClock(c.in, day)
			if c.want == "" {
				if ok {
					t.Errorf("ParseClock(%q) = %s, want none", c.in, got)
				}
				return
			}
			if !ok || got.Format("15:04:05") != c.want || got.YearDay() != day.YearDay() || got.Location() != day.Location() {
				t.Errorf("ParseClock(%q) = %s, %v; want %s on %s", c.in, got, ok, c.want, day.Format("2006-01-02"))
			}
		})
	}
}

func TestStatusOf(t *testing.T) {
	cases := []struct {
		in   string
		want Status
	}{
		{"Success", OK},
		{"Successful", OK},
		{"OK", OK},
		{"Completed", OK},
		{"Backup Successful", OK},
		{"was successfully completed.", OK},
		{"Succeeded with warnings", Warn},
		{"Backup Completed with Warnings", Warn},
		{"Completed with errors", Warn},
		{"partially completed", Warn},
		{"Job Completed with Exceptions", Warn},
		{"Warning", Warn},
		{"Failed", Failed},
		{"Backup Failed", Failed},
		{"Unsuccessful", Failed},
		{"Aborted", Failed},
		{"Canceled", Failed},
		{"Cancelled by user", Failed},
		{"Missed", Failed},
		{"Error", Failed},
		// Negations do not count as the problem they deny.
		{"Completed, no errors", OK},
		{"Completed without warnings", OK},
		{"Erfolgreich, keine Fehler", OK},
		{"0 errors", Unknown},
		// Other languages.
		{"Erfolgreich", OK},
		{"Abgeschlossen", OK},
		{"Erfolgreich mit Warnungen", Warn},
		{"Abgeschlossen mit Fehlern", Warn},
		{"Teilweise abgeschlossen", Warn},
		{"Fehlgeschlagen", Failed},
		{"Abgebrochen", Failed},
		{"Réussie", OK},
		{"Réussie avec des avertissements", Warn},
		{"Échec", Failed},
		{"La sauvegarde a échoué", Failed},
		{"Geslaagd", OK},
		{"Geslaagd met waarschuwingen", Warn},
		{"Mislukt", Failed},
		{"Correcto", OK},
		{"Correcto con advertencias", Warn},
		{"Fallido", Failed},
		{"Riuscito", OK},
		{"Riuscito con avvisi", Warn},
		{"Non riuscito", Failed},
		{"Bem-sucedido", OK},
		{"Concluído com avisos", Warn},
		{"Falhou", Failed},
		// No status at all.
		{"Running", Unknown},
		{"In process", Unknown},
		{"book", Unknown},
		{"", Unknown},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			if got := StatusOf(c.in); got != c.want {
				t.Errorf("StatusOf(%q) = %s, want %s", c.in, got, c.want)
			}
		})
	}
}

func TestSummaryText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Error: Failed to open backup repository", "Failed to open backup repository"},
		{"- The backup location is not reachable.", "The backup location is not reachable."},
		{"• 3 files were skipped", "3 files were skipped"},
		{"  1. The archive is corrupted.", "The archive is corrupted."},
		{"* Warning: disk almost full", "disk almost full"},
		{"Fehler: Zeitüberschreitung", "Zeitüberschreitung"},
		{"Erreur : accès refusé", "accès refusé"},
		{"Failed to create snapshot", "Failed to create snapshot"}, // a message, not a label
		{"3 files were skipped. 1. They were locked.", "3 files were skipped. 1. They were locked."},
		{"1.5 GB could not be read", "1.5 GB could not be read"},
		{"-", ""},
		{"", ""},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			if got := summaryText(c.in); got != c.want {
				t.Errorf("summaryText(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestFieldsValueAndHeadings(t *testing.T) {
	lines := []string{
		"Backup size: -",
		"Size\t1.2 GB",
		"Status: Succeeded",
		"Errors:",
		"- first",
		"Erreur :",
		"Warnings\t2",
	}
	f := FieldsOf(lines)
	t.Run("placeholder skipped", func(t *testing.T) {
		if v, ok := f.Value("backup size", "size"); !ok || v != "1.2 GB" {
			t.Errorf("Value = %q, %v; want 1.2 GB", v, ok)
		}
		if _, ok := f.Value("backup size"); ok {
			t.Error(`Value("backup size") found "-"`)
		}
		if v, ok := f.Get("backup size"); !ok || v != "-" {
			t.Errorf("Get = %q, %v; want -", v, ok)
		}
	})
	t.Run("headings", func(t *testing.T) {
		if i := headingAt(lines, "errors"); i != 3 {
			t.Errorf("headingAt(errors) = %d, want 3", i)
		}
		if i := headingAt(lines, "erreur"); i != 5 {
			t.Errorf("headingAt(erreur) = %d, want 5", i)
		}
		if i := headingAt(lines, "warnings"); i != -1 {
			t.Errorf("headingAt(warnings) = %d, want -1 (a table row is no heading)", i)
		}
	})
	t.Run("sizeValue", func(t *testing.T) {
		if n := sizeValue(nil, "-"); n != -1 {
			t.Errorf("sizeValue(-) = %d", n)
		}
		if n := sizeValue(nil, "0 B"); n != 0 {
			t.Errorf("sizeValue(0 B) = %d", n)
		}
	})
}

func TestProblemRow(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		want  string
	}{
		{"first failing row's details", []string{
			"Status\tCompleted", // a label and its value: not a header
			"Errors\t2",
			"VM\tStatus\tSize\tDetails",
			"A\tSuccess\t1 GB",
			"B\tFailed\t0 B\tError: snapshot failed",
			"C\tWarning\t2 GB\tlow space",
		}, "snapshot failed"},
		{"last cell without a details header", []string{
			"Name\tResult\tDuration\tNote",
			"A\tWarning\t0:01:00\tskipped 2 files",
		}, "skipped 2 files"},
		{"count column is not a message", []string{
			"Data source\tStatus\tSent size\tErrors",
			"Files\tCompleted with errors\t1 GB",
		}, ""},
		{"no table", []string{"Status: Failed", "Error: x"}, ""},
		{"short rows", []string{"Name\tStatus\tDetails", "A", "\t", "B\tFailed"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := problemRow(c.lines, 0); got != c.want {
				t.Errorf("problemRow = %q, want %q", got, c.want)
			}
		})
	}
}

func TestWrapped(t *testing.T) {
	m := &Message{Text: "Errors:\r\n- first part of a long\r\n  message that wraps\r\n  twice.\r\n- second\r\n" +
		"Warnings:\r\n1. one\r\n   more\r\n2. two\r\nFooter: x\r\n  \r\n  indented after a blank\r\n"}
	m.TextLines = textLines(m.Text)
	m.Lines = m.TextLines
	cases := []struct{ line, want string }{
		{"- first part of a long", "- first part of a long message that wraps twice."},
		{"- second", "- second"},
		{"1. one", "1. one more"},
		{"2. two", "2. two"},
		{"Footer: x", "Footer: x"},
		{"not in the text", "not in the text"},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			if got := wrapped(m, c.line); got != c.want {
				t.Errorf("wrapped(%q) = %q, want %q", c.line, got, c.want)
			}
		})
	}
	if got := firstAfter(m, m.Lines, headingAt(m.Lines, "errors")); got != "first part of a long message that wraps twice." {
		t.Errorf("firstAfter = %q", got)
	}
	if got := firstAfter(m, m.Lines, len(m.Lines)-1); got != "" {
		t.Errorf("firstAfter the last line = %q", got)
	}
	if got := firstAfter(nil, []string{"h", "a\tb", "c"}, 0); got != "" {
		t.Errorf("firstAfter before a table row = %q", got)
	}
	if got := wrapped(nil, "x"); got != "x" {
		t.Errorf("wrapped(nil) = %q", got)
	}
}

func TestMailNames(t *testing.T) {
	m := &Message{From: "Datto Alerts <noreply@datto.example>", Subject: "Recovery point", Lines: []string{"Cove Data Protection"}}
	for word, want := range map[string]bool{"datto": true, "cove": true, "recovery": true, "over": false, "acronis": false} {
		if got := mailNames(m, word); got != want {
			t.Errorf("mailNames(%q) = %v, want %v", word, got, want)
		}
	}
	if mailNames(&Message{Subject: "Recovery test"}, "cove") {
		t.Error(`"cove" found inside "Recovery"`)
	}
	if mailNames(nil, "x") {
		t.Error("nil message names a word")
	}
}

func TestTruncate(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven chars", 10, "eleven ch…"},
		{"Größenänderung", 5, "Größ…"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			if got := Truncate(c.in, c.n); got != c.want {
				t.Errorf("Truncate(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
			}
		})
	}
}
