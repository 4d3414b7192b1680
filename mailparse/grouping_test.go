package mailparse

import "testing"

// TestSizeDigitGrouping holds parseSize to the separator rule of
// decisions.md ("Report e-mails"): a lone separator before exactly three
// digits is read by the mail's language, everything else the same in both.
func TestSizeDigitGrouping(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name         string
		in           string
		decimalComma bool
		want         int64
	}{
		{"English comma before three digits groups", "1,536 MB", false, 1536 * mib},
		{"English point before three digits is a decimal", "1.536 MB", false, 1610613},
		{"German point before three digits groups", "1.536 MB", true, 1536 * mib},
		{"German comma before three digits is a decimal", "1,536 MB", true, 1610613},
		{"German grouped with decimals", "1.536,5 MB", true, 1536*mib + mib/2},
		{"German grouped with decimals in an English mail", "1.536,5 MB", false, 1536*mib + mib/2},
		{"English grouped with decimals", "1,536.5 MB", false, 1536*mib + mib/2},
		{"English grouped with decimals in a German mail", "1,536.5 MB", true, 1536*mib + mib/2},
		{"French space groups", "1 536,5 Mo", true, 1536*mib + mib/2},
		{"French narrow no-break space groups", "1\u202f536,5 Mo", true, 1536*mib + mib/2},
		{"two digits after a comma are decimals in English", "3,42 GB", false, 3672197038},
		{"two digits after a point are decimals in German", "3.42 GB", true, 3672197038},
		{"a comma twice groups in German too", "1,234,567 KB", true, 1234567 << 10},
		{"a point twice groups in English too", "1.234.567 KB", false, 1234567 << 10},
		{"zero before the separator is a decimal", "0,536 GB", false, 575525618},
		{"zero before a point is a decimal in German", "0.536 GB", true, 575525618},
		{"byte counts always group", "1.234 Bytes", false, 1234},
		{"byte counts always group in German", "1,234 bytes", true, 1234},
		{"German bytes spelled out", "1.234.567.890 Bytes", true, 1234567890},
		{"French octets", "1 234 567 890 octets", true, 1234567890},
		{"four digits after a lone comma are decimals", "1,5360 GB", false, 1649267442},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := parseSize(c.in, c.decimalComma)
			if !ok || got != c.want {
				t.Errorf("parseSize(%q, decimalComma %v) = %d, %v; want %d", c.in, c.decimalComma, got, ok, c.want)
			}
		})
	}
}

// TestDecimalCommaLanguage: a mail's language decides how its sizes read.
func TestDecimalCommaLanguage(t *testing.T) {
	cases := []struct {
		name, subject, body string
		want                bool
	}{
		{"English", "Backup completed with warnings", "Status: Warning\nThe file was skipped because it is locked.\nBackup size: 1,536 MB", false},
		{"German", "Sicherung mit Warnungen abgeschlossen", "Status: Warnung\nDie Datei wurde übersprungen.\nSicherungsgröße: 1.536 MB", true},
		{"French", "La sauvegarde a échoué", "Statut : Échec\nLa tâche de sauvegarde est terminée avec des erreurs.\nTaille : 1 536,5 Mo", true},
		{"Dutch", "Back-uptaak mislukt", "De taak is mislukt.\nGrootte: 1.536 MB", true},
		{"no words at all reads as English", "x", "1,536 MB", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Read(testMail("a@example.test", c.subject, "", "text/plain", c.body))
			if err != nil {
				t.Fatal(err)
			}
			if m.DecimalComma != c.want {
				t.Errorf("DecimalComma = %v, want %v", m.DecimalComma, c.want)
			}
		})
	}
}
