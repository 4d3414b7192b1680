package mailparse

import "testing"

func TestMSP360Cases(t *testing.T) {
	from := `"MSP360 Managed Backup" <mbs@harbourline.example.test>`
	plain := plainMail(from, "")
	runVendorCases(t, "msp360", []vendorCase{
		{name: "heading only",
			raw:    plain("Backup report", "MSP360 Managed Backup\nBackup plan Daily-Files on HL-WS07: Success\nUploaded size: 12 MB\n"),
			status: OK, job: "Daily-Files", size: wantBytes(12 << 20)},
		{name: "overdue", raw: plain(`[MSP360] Backup plan "Laptops" on HL-LT3 completed: Overdue`, "Status: Overdue\n"),
			status: Failed, job: "Laptops"},
		{name: "error label instead of a list",
			raw: plain(`[MSP360] Backup plan "SQL" on HL-DB1 completed: Failed`,
				"Status: Failed\nError: Error: The database HL_CRM is in use by another backup.\n"),
			status: Failed, summary: "The database HL_CRM is in use by another backup."},
		{name: "restore verification failed",
			raw: plain(`[MSP360] Backup plan "Image" on HL-DB1 completed: Success`,
				"Status: Success\nRestore verification: Failed\nWarnings:\nRestore verification could not boot the image.\n"),
			status: OK, integrity: true, summary: "Restore verification could not boot the image."},
		{name: "a license notice", raw: plain("[MSP360] Your license expires in 7 days",
			"MSP360 Managed Backup\nYour license for HL-WS07 expires on 3/10/2026.\n"), wantUnreadable: true},
	})
}

func TestMSP360OtherVendorNotSilentlyOK(t *testing.T) {
	for _, s := range []string{"emails/cove/01-success.eml", "emails/acronis/01-success.eml", "emails/synology/01-success.eml"} {
		notSilentlyOK(t, "msp360", s, true)
	}
}
