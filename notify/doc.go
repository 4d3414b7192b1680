// Package notify sends the engine's notices to webhook, Slack, e-mail,
// Teams and PagerDuty channels and to the tickets of ConnectWise, Autotask
// and HaloPSA channels, and reports each attempt's outcome back to the
// engine.
//
// A [Notifier] is the engine's [engine.Deliverer]: [Notifier.Deliver] queues
// a notice without blocking, a fixed pool of workers makes exactly one
// attempt per notice, and the outcome of every attempt (success, or a short
// reason for the failure) goes to [Options.Done]. Retries, backoff and the
// durable outbox are the engine's: this package never retries on its own.
//
// The wire formats:
//
//   - webhook: POST of {"event","sentAt","workspaceId","alert","job"} as
//     compact JSON, signed with X-Backupmon-Signature: sha256=<hex HMAC-SHA256
//     of the body, keyed with the channel's secret>;
//   - slack: POST of {"text":"..."}, compatible with Slack incoming webhooks;
//   - email: one text/plain, quoted-printable message through the SMTP relay
//     of [Options.SMTP], sent with net/smtp;
//   - teams: POST of a message carrying one Adaptive Card (teams.go);
//   - pagerduty: Events API v2, the alert's id as dedup_key (pagerduty.go);
//   - connectwise, autotask, halopsa: one ticket per alert, found again by
//     the alert's id before one is made, noted on raise, acknowledge,
//     snooze and escalation, closed on resolve (ticket.go and one file per
//     PSA). The attempt's outcome carries the ticket's id, which the engine
//     keeps with the alert, and whether a refusal is for good
//     ([RemoteError.Permanent]).
//
// Every HTTP connection obeys the address rule of dialguard.go,
// checked in the dialer on every resolved address: no loopback, private,
// link-local or other internal address unless [Options.AllowPrivate], and
// never a cloud metadata address or [Options.AdminListener]. A refused
// attempt fails with a [RefusedError]'s text. The SMTP relay, an operator
// setting, is not checked.
package notify
