package state

// Notification events (decisions.md 7).
const (
	EventOpened    = "alert.opened"
	EventRaised    = "alert.raised"
	EventEscalated = "alert.escalated"
	EventResolved  = "alert.resolved"
)

// Channel types (decisions.md 7).
const (
	ChannelWebhook = "webhook"
	ChannelSlack   = "slack"
	ChannelEmail   = "email"
)

// NoticeChannel is where a notice goes: the channel as it was when the
// notice was queued.
type NoticeChannel struct {
	ID     ID
	Type   string // ChannelWebhook, ChannelSlack or ChannelEmail
	Name   string
	URL    string // webhook and slack
	To     string // email: the recipient address
	Secret string // webhook: the signing secret

	// The channels of psa.go: their settings and secrets, the ticket the
	// alert already has in it ("" none), and the PSA company (board,
	// ticket type) of the alert's client; Mapped is false when the client
	// has no mapping and the channel's defaults apply.
	Settings, Secrets []Setting
	Ticket            string
	Company, Board    string
	TicketType        string
	Mapped            bool
}

// Notice is one delivery attempt the engine hands to its Deliverer: the
// delivery's identity, where it goes and what it says. Alert and Job are
// the REST API's alert and job objects as they read when the event
// happened; the text fields repeat what a person reads in a chat message
// or an e-mail.
type Notice struct {
	Workspace ID
	Delivery  ID
	Attempt   int // 1 for the first attempt
	Channel   NoticeChannel
	Event     string // EventOpened, EventRaised, EventEscalated or EventResolved
	Alert     []byte // JSON object
	Job       []byte // JSON object

	WorkspaceName string
	ClientName    string
	JobName       string
	AlertType     string // failed, missing, warning, integrity
	Severity      string // warning, critical
	Summary       string

	AlertID         ID
	Note            string // acknowledged, snoozed, resolved by hand: who, and their note
	SizeBytes       int64  // the last run's size; -1 none
	DurationSeconds int64  // the last run's duration; -1 none
}
