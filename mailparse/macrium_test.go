package mailparse

import "testing"

func TestMacriumCases(t *testing.T) {
	from := `"Macrium Reflect" <reflect@harbourline.example.test>`
	plain := plainMail(from, "")
	runVendorCases(t, "macrium", []vendorCase{
		{name: "headline only",
			raw:    plain("Reflect report", "Macrium Reflect\nFailed :(\nBackup definition: Laptop Image\nLog\nError - Destination drive F: is full\nBackup aborted\n"),
			status: Failed, job: "Laptop Image", summary: "Destination drive F: is full"},
		{name: "verify field failed, backup succeeded",
			raw:    plain("HL-PC2 Macrium Reflect - Backup Success", "Backup definition: Daily\nBackup Status: Success\nVerify: Failed\n"),
			status: OK, integrity: true},
		{name: "no problem line: the closing line",
			raw:    plain("HL-PC2 Macrium Reflect - Backup Failed", "Backup definition: Daily\nBackup Status: Failed\nLog\nBackup aborted!\n"),
			status: Failed, summary: "Backup aborted!"},
		{name: "data written missing",
			raw:    plain("HL-PC2 Macrium Reflect - Backup Success", "Backup definition: Daily\nBackup Status: Success\n"),
			status: OK, size: wantBytes(-1)},
		{name: "an update notice", raw: plain("Macrium Reflect update available",
			"Macrium Reflect\nVersion 8.1.8325 is available for download.\n"), wantUnreadable: true},
	})
}

func TestMacriumOtherVendorNotSilentlyOK(t *testing.T) {
	for _, s := range []string{"emails/synology/01-success.eml", "emails/veeam/01-success.eml", "emails/acronis/01-success.eml"} {
		notSilentlyOK(t, "macrium", s, true)
	}
}
