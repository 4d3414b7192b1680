package main

import (
	"log/slog"
	"strings"
	"time"

	"backupmon/mailstore"
)

// mailKeep is how long a raw e-mail file may live: the 30 days an unparsed
// entry is kept, and a day's margin.
const mailKeep = 31 * 24 * time.Hour

// sweepMail deletes kept e-mails past their time every hour (and once at
// start), until done closes.
func sweepMail(store *mailstore.Store, logger *slog.Logger, done <-chan struct{}) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if n, err := store.Sweep(time.Now().Add(-mailKeep)); err != nil {
			logger.Warn("sweep kept e-mails", "err", err)
		} else if n > 0 {
			logger.Info("swept kept e-mails", "files", n)
		}
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}

// validDomain reports whether s reads as a domain name: dot-separated
// labels of letters, digits and hyphens.
func validDomain(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
