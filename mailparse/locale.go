package mailparse

import (
	"strings"
	"unicode"
)

// The mail's language, as far as numbers care: English writes 1,536.5 and
// German, French, Dutch, Spanish, Italian and Portuguese write 1.536,5 (or
// 1 536,5). A size's separators are read by it (parseNumber).

// englishWords and decimalCommaWords are common words of report mails in
// English and in the languages that write a decimal comma, lowercased. A
// word both could use ("status", "backup") is in neither.
var (
	englishWords = wordSetOf(`the and of to was were with has have is on for job task start started time end
		finished duration size failed completed success successful successfully warning warnings error errors could not
		transferred data processed files file skipped backed because another process name type result started
		machine virtual machines device repository destination sent uploaded written`)
	decimalCommaWords = wordSetOf(`der die das und nicht wurde wurden mit von auf ist im den sicherung auftrag aufgabe
		fehler warnung warnungen erfolgreich abgeschlossen fehlgeschlagen dauer größe startzeit endzeit gestartet
		beendet übertragen übertragene daten datei dateien gerätename sitzungstyp protokoll geschriebene ergebnis
		vorgang verarbeitet zeit
		le la les des du et une est sur sauvegarde tâche taille durée échec échoué terminé terminée réussi réussie
		erreur erreurs avertissement avertissements heure début fin données transférées statut fichiers fichier
		het een niet taak mislukt voltooid geslaagd grootte duur fout gegevens
		el los las copia seguridad tarea tamaño duración correcto
		il di che lavoro dimensione durata completato`)
)

// wordSetOf makes a set of the words in list, separated by white space.
func wordSetOf(list string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(list) {
		set[w] = true
	}
	return set
}

// decimalComma reports whether m is written in a language that writes
// decimals with a comma: more of the words of its subject and first 80
// lines are such a language's (decimalCommaWords) than English
// (englishWords). A mail with neither reads as English.
func decimalComma(m *Message) bool {
	en, dc := 0, 0
	count := func(s string) {
		for w := range strings.FieldsFuncSeq(s, func(r rune) bool { return !unicode.IsLetter(r) }) {
			if len(w) > 20 {
				continue
			}
			w = strings.ToLower(w)
			switch {
			case englishWords[w]:
				en++
			case decimalCommaWords[w]:
				dc++
			}
		}
	}
	count(m.Subject)
	for i, l := range m.Lines {
		if i >= 80 {
			break
		}
		count(l)
	}
	return dc > en
}
