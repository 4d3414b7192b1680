// Package mailparse reads backup products' report e-mails into results:
// it decodes the message (MIME parts, transfer encodings, charsets, HTML),
// then hands the text to the parser of the job's vendor.
//
// Every parser sits behind Parser and is registered in parsers (parse.go).
// Parsers see a Message, never raw bytes, so the hostile-input limits live
// in one place (message.go).
package mailparse
