package mailparse

import (
	"testing"
)

func TestAcronisCases(t *testing.T) {
	from := `"Acronis Cyber Protect Cloud" <noreply@acronis.example>`
	mail := plainMail(from, "Wed, 04 Mar 2026 12:00:00 +0000")
	runVendorCases(t, "acronis", []vendorCase{
		{name: "Spanish, day-first dates decided by the Date header",
			raw: plainMail(from, "Wed, 04 Mar 2026 12:00:00 +0100")("Copia de seguridad correcta con advertencias: PC-07 - Plan diario",
				"Carga de trabajo: PC-07\nPlan de protección: Plan diario\nEstado: Correcto con advertencias\n"+
					"Hora de inicio: 04/03/2026 11:00:00 (UTC+01:00)\nHora de finalización: 04/03/2026 11:30:00 (UTC+01:00)\n"+
					"Tamaño de la copia de seguridad: 512 MB\nAdvertencias:\n- Se omitieron 2 archivos bloqueados.\n"),
			status: Warn, job: "Plan diario", summary: "Se omitieron 2 archivos bloqueados.",
			start: "2026-03-04T10:00:00Z", duration: wantSeconds(1800)},
		{name: "no Status field: the headline and subject say it; plan from the subject",
			raw:    mail("Backup failed: WS-01 - Laptops - hourly", "Backup failed\nWorkload: WS-01\nError: The machine is offline.\n"),
			status: Failed, job: "Laptops - hourly", summary: "The machine is offline.",
			size: wantBytes(-1), duration: wantSeconds(-1), start: noTime},
		{name: "a long error wrapped in the text body",
			raw: mail("Backup failed: WS-02 - Laptops",
				"Backup failed\nWorkload: WS-02\nProtection plan: Laptops\nStatus: Failed\nErrors:\n"+
					"- The backup location 'Cloud storage' is not reachable: the connection to\n"+
					"  the data center timed out after 300 seconds.\n"+
					"- A second error.\n\nGo to the console: https://cloud.acronis.example/\n"),
			status:  Failed,
			summary: "The backup location 'Cloud storage' is not reachable: the connection to the data center timed out after 300 seconds."},
		{name: "success keeps no summary",
			raw:    mail("Backup succeeded: SRV - Nightly", "Workload: SRV\nProtection plan: Nightly\nStatus: Succeeded\nBackup size: 0 B\nDetails:\n- 0 errors\n"),
			status: OK, size: wantBytes(0)},
	})
}

func TestAcronisUnreadable(t *testing.T) {
	mail := plainMail(`"Acronis Cyber Protect Cloud" <noreply@acronis.example>`, "Wed, 04 Mar 2026 12:00:00 +0000")
	runUnreadableCases(t, "acronis", mail, []unreadableCase{
		{"status neither stated nor in the headline", "Backup notification: WS-01 - Plan",
			"Backup notification\nWorkload: WS-01\nProtection plan: Plan\nStatus: Pending\n"},
		{"a quota notice", "Quota exceeded: Customer A", "Your storage quota is almost used up.\nWorkload: WS-01\n"},
	})
}

func TestAcronisOtherVendorRefused(t *testing.T) {
	expectForeignRefused(t, "acronis", "msp360/01-success.eml")
}

func TestAcronisIntegrityWords(t *testing.T) {
	checkIntegrityWords(t, acronisIntegrityRe, []integrityCase{
		{"The backup archive 'A' is corrupted: checksum mismatch in 3 data blocks.", true},
		{"Validation failed: the recovery point cannot be read.", true},
		{"Die Sicherung ist beschädigt.", true},
		{"La vérification a échoué.", true},
		{"The file C:\\data\\x.pst is corrupt and was skipped.", false},
		{"The backup location 'Cloud storage' is not reachable.", false},
	})
}
