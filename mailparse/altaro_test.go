package mailparse

import "testing"

func TestAltaroCases(t *testing.T) {
	from := `"Hornetsecurity VM Backup" <vmb@harbourline.example.test>`
	plain := plainMail(from, "")
	runVendorCases(t, "altaro", []vendorCase{
		{name: "status only in the subject",
			raw:    plain("[Altaro VM Backup] Backup Successful - HL-HV9 (2 VMs)", "Altaro VM Backup\nTotal Transfer Size: 0 B\n"),
			status: OK, job: "HL-HV9", size: wantBytes(0)},
		{name: "backup health monitor found corruption",
			raw: plain("[Hornetsecurity VM Backup] Backup Health Monitor Failed - HL-HV9 (1 VM)",
				"Host: HL-HV9\nOperation: Backup Health Monitor\nResult: Failed\nErrors:\nHL-APP4: 2 corrupt blocks were found in the backup; they will be repaired in the next backup.\n"),
			status: Failed, job: "HL-HV9", integrity: true,
			summary: "HL-APP4: 2 corrupt blocks were found in the backup; they will be repaired in the next backup."},
		{name: "cancelled", raw: plain("[Hornetsecurity VM Backup] Backup Cancelled - HL-HV9 (1 VM)", "Host: HL-HV9\nResult: Cancelled\n"),
			status: Failed},
		{name: "not a backup result", raw: plain("[Hornetsecurity VM Backup] Your trial expires soon",
			"Hornetsecurity VM Backup\nYour trial ends in 5 days.\n"), wantUnreadable: true},
	})
}

func TestAltaroOtherVendorNotSilentlyOK(t *testing.T) {
	for _, s := range []string{"emails/datto/01-success.eml", "emails/veeam/01-success.eml", "emails/cove/01-success.eml"} {
		notSilentlyOK(t, "altaro", s, true)
	}
}
