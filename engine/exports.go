package engine

import "backupmon/state"

// Names of the state machine that the engine's callers use: the engine is
// their one door, so they need not import state.

// ID is a workspace, client, job, alert, key or result id.
type ID = state.ID

// ParseID reads an id in its text form; ok is false when s is not one.
func ParseID(s string) (ID, bool) { return state.ParseID(s) }

// Time is a point in time in Unix milliseconds, shown as a contract
// timestamp.
type Time = state.Time

// FormatTime returns Unix milliseconds as a contract timestamp.
func FormatTime(ms int64) string { return state.FormatTime(ms) }

// Rate is a percentage with one decimal, or none.
type Rate = state.Rate

// StatusCounts counts jobs by status.
type StatusCounts = state.StatusCounts

// Notice is one delivery attempt handed to a Deliverer.
type Notice = state.Notice

// NoticeChannel is where a notice goes.
type NoticeChannel = state.NoticeChannel

// Vendors lists the vendor identifiers in their display order.
func Vendors() []string { return state.Vendors() }

// VendorName returns a vendor's display name.
func VendorName(vendor string) string { return state.VendorName(vendor) }

// Job statuses as shown.
const (
	StatusHealthy = state.StatusHealthy
	StatusWarning = state.StatusWarning
	StatusFailed  = state.StatusFailed
	StatusMissing = state.StatusMissing
	StatusWaiting = state.StatusWaiting
	StatusPaused  = state.StatusPaused
)

// Notification events (decisions.md 7).
const (
	EventOpened    = state.EventOpened
	EventRaised    = state.EventRaised
	EventEscalated = state.EventEscalated
	EventResolved  = state.EventResolved
)

// Channel types (decisions.md 7).
const (
	ChannelWebhook = state.ChannelWebhook
	ChannelSlack   = state.ChannelSlack
	ChannelEmail   = state.ChannelEmail
)

// Roles of dashboard users, from most to least powerful.
const (
	RoleOwner  = state.RoleOwner
	RoleAdmin  = state.RoleAdmin
	RoleMember = state.RoleMember
	RoleViewer = state.RoleViewer
)
