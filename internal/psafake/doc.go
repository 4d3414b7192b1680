// Package psafake runs local fakes of the remote APIs the notification
// channels call (ConnectWise PSA, Autotask, HaloPSA, PagerDuty's Events
// API v2, a Teams Workflows webhook) for tests: each checks what its
// vendor's documentation requires of a request (authentication headers,
// paths, fields and their limits), keeps what a real one would (tickets,
// notes, statuses), and answers as the documentation shows, error bodies
// included. The pages are cited in docs/decisions.md, section
// "Missing reports, timers and notifications".
package psafake
