package testserver

import (
	"regexp"
	"time"
)

// Shapes of the values the APIs answer with.
var (
	// SecretRe is a key's secret as its creation answers it.
	SecretRe = regexp.MustCompile(`^svc_live_[0-9a-f]{48}$`)
	// WebhookSecretRe is a webhook channel's signing secret.
	WebhookSecretRe = regexp.MustCompile(`^whsec_[0-9a-f]{64}$`)
	// TimeRe is the contract's timestamp (api.md 2.1): UTC, milliseconds.
	TimeRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)
)

// TimeLayout is the layout of the contract's timestamps.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// TS formats t as the APIs show times.
func TS(t time.Time) string { return t.UTC().Format(TimeLayout) }
