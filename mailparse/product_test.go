package mailparse

import "testing"

// TestNamesProductInEitherBody: a multipart mail whose plain-text part
// does not name the product, but whose HTML part does, is the product's.
func TestNamesProductInEitherBody(t *testing.T) {
	m := &Message{Subject: "Job report", TextLines: []string{"Job status: Failed"}, HTMLLines: []string{"NAKIVO Backup & Replication", "Job status\tFailed"}}
	m.Lines = m.TextLines
	if !namesProduct(m, "nakivo") {
		t.Error("the HTML part's product name was not seen")
	}
	if namesProduct(m, "macrium") {
		t.Error("a product the mail does not name was seen")
	}
}
