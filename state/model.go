package state

import (
	"sync/atomic"
	"time"
)

// Result statuses as stored (and as Report.Status).
const (
	ResultNone    uint8 = 0
	ResultOK      uint8 = 1
	ResultWarning uint8 = 2
	ResultFailed  uint8 = 3
)

// Alert types and severities as stored.
const (
	AlertFailed    uint8 = 1
	alertMissing   uint8 = 2
	AlertWarning   uint8 = 3
	AlertIntegrity uint8 = 4

	SeverityWarning  uint8 = 1
	SeverityCritical uint8 = 2
)

// Alert statuses as stored. Snoozed alerts whose snooze has ended read as
// open (see alertStatus).
const (
	AlertOpen         uint8 = 1
	AlertAcknowledged uint8 = 2
	AlertSnoozed      uint8 = 3
	AlertResolved     uint8 = 4
)

// workspace is the whole state of one workspace. Only its actor touches it.
type Workspace struct {
	ID          ID
	Name        string
	TimeZone    string
	Loc         *time.Location
	Plan        string
	Status      string
	TrialEndsAt int64 // 0: none
	createdAt   int64

	Seq uint64 // sequence number of the last record applied
	IDs *IDGen

	scratch []byte // for encodings made only to be kept (keptFigures)

	// figVersion counts the changes that can move a derived figure (every
	// record but those of keys and REST usage, and retention); keptHealth
	// is the workspace's health as of one version.
	figVersion uint64
	keptHealth keptHealth

	Clients  map[ID]*Client
	Jobs     map[ID]*Job
	devices  map[ID]*device
	Keys     map[ID]*Key
	Alerts   map[ID]*Alert
	AlertLog []*Alert // every alert, oldest first
	Activity []Activity
	sources  []string       // interned result sources; results hold an index
	sourceIx map[string]int // source → index in sources

	// Ordered indexes for the REST API's keyset pages (index.go).
	ClientList []*Client   // by (name without case, id)
	JobList    []*Job      // by (name without case, id)
	JobIdx     jobIndex    // the jobs by status, vendor and last result, each by name
	Results    resultIndex // every result, by (receivedAt, id), per status and vendor
	Idem       IdemTable   // the jobs' idempotency keys (idem.go)
	Unresolved []*Alert    // unresolved alerts, by (createdAt, id)

	// Notifications (notify.go): channels, escalation rules by
	// (afterMinutes, id), deliveries oldest first.
	Channels    []*Channel
	Escalations []*Escalation
	Deliveries  []*Delivery
	DeliveryIx  map[ID]*Delivery

	// Dashboard users and their live sessions (people.go).
	Users    map[ID]*User
	Sessions map[ID]*Session
	// Open invitations (rec_invites.go; nil until the first) and whether
	// two-factor sign-in is required (rec_twofactor.go).
	Invites           map[ID]*Invite
	TwoFactorRequired bool

	// Report e-mails whose status could not be read, oldest first
	// (mail.go), and the raw messages records let go of since the mail
	// store was last told.
	Unparsed   []*UnparsedMail
	droppedRaw []string
	RulesState              // the workspace's parsing rules (rec_rules.go)
	AIState                 // the model's suggestions: prompt, queue, calls (rec_ai.go)
	Pending    atomic.Int64 // pending deliveries, read by the metrics off the actor
	TrialNoted int64        // the trialEndsAt a TrialEnded record noted

	// Time-driven work (timers.go, missing.go) and what the record being
	// applied set off (notify.go); none of it is saved.
	hooks   Hooks  // the engine's, for the record being applied
	MissedQ []*Job // jobs turned missing whose alert is not recorded yet
	events  []alertEvent
	Fresh   []*Delivery // deliveries made by the last record applied

	// The REST API's calendar month (year*100 + month) and its count, which
	// the monthly quota needs across restarts (RESTUsage records).
	RESTMonth      int64
	RESTMonthCount int64

	// The REST API's and the assistant server's UTC minute and their counts,
	// kept in memory only: a shard handing over to another node writes
	// them in a RateLevels record, so the next owner goes on counting.
	RESTMinute, RESTMinuteCount int64
	AsstMinute, AsstMinuteCount int64
}

type Client struct {
	ID        ID
	Name      string
	Status    string // active, paused, archived
	createdAt int64
	OffAt     int64  // when the client was last paused or archived
	OffSeq    uint64 // the workspace sequence number of that record: orders it against reports
	Jobs      map[ID]*Job
	Key       string // name without case, the sort key
	JobList   []*Job // its jobs by (name without case, id)
}

type device struct {
	id       ID
	clientID ID
	Name     string
	Type     string
	Hostname string
	jobs     int // jobs running on it
}

type Job struct {
	ID        ID
	Client    *Client
	Device    *device
	Name      string
	Vendor    string
	Vx        uint8 // the vendor's index in vendorOrder
	CreatedAt int64

	IntervalMinutes int64
	GraceMinutes    int64
	ExpectedDays    uint8 // bit d set: weekday d (time.Weekday) expected
	SLATarget       float64

	Paused      bool   // the job's own pause
	PausedUntil int64  // 0: no end
	PausedAt    int64  // when the job's own pause began
	PausedSeq   uint64 // the workspace sequence number of the record that began it

	LastResult     uint8  // resultNone until the first report
	LastReportAt   int64  // completedAt of the latest non-superseded report; 0: none
	LastReceivedAt int64  // receipt time of that report
	LastReportSeq  uint64 // the workspace sequence number of that report's record
	LastSuccessAt  int64
	LastFailureAt  int64
	FailureStreak  int
	DueBase        int64 // the time the next due time counts from

	Results    []Result // ordered by (receivedAt, id)
	resultBase uint32   // results dropped from the front so far: results[i] is result number resultBase+i (resultindex.go)
	Alert      *Alert   // the unresolved alert, or nil
	Alerts     []*Alert // every alert of the job, by (createdAt, id)

	IngestToken string
	SizeDrop    SizeDropSetting // its own size-drop threshold (sizedrop.go)

	Key       string // name without case, the sort key
	idxStatus uint8  // 1 + the index of the status list the job is in (jobindex.go); 0: none
	dirty     bool   // in jobIdx.dirty
	Retime    bool   // in jobIdx.retime
	TimerIx   int32  // 1 + its place in jobIdx.timers; 0: not there
	MissedDue int64  // the due time whose passing opened (or raised) a missing alert
	MissedQ   bool   // in workspace.missedQ
	json      []byte // the REST job object as last encoded
	jsonFrom  int64  // json is valid from this time (when it was encoded)
	jsonUntil int64  // to this time (0: not valid)
	// The status and the 30-day results json shows, valid with it.
	keptStatus string
	keptTally  Tally
}

// result is one stored backup result, kept small: millions live in memory.
type Result struct {
	ID          ID
	ReceivedAt  int64
	CompletedAt int64
	SizeBytes   int64 // -1: none
	Duration    int32 // seconds; -1: none
	Status      uint8
	Source      uint16 // index into workspace.sources
}

type Alert struct {
	ID             ID
	Job            *Job
	Type           uint8
	Severity       uint8
	Status         uint8
	Summary        string
	AI             *aiNote // the catalogue's suggestion for summary; nil: none
	CreatedAt      int64
	AcknowledgedAt int64
	SnoozedUntil   int64
	ResolvedAt     int64
	EscChecked     int64        // escalation instants up to this one are done
	Tickets        []TicketLink // its tickets in PSA channels (psa.go)
}

type Key struct {
	ID        ID
	Name      string
	Type      string // rest, report, assistant
	Prefix    string
	Source    string // "api:" + prefix, the source of the results it reports
	Hash      [32]byte
	Scopes    uint8
	ReadWrite bool
	CreatedAt int64
	ExpiresAt int64 // 0: never
	FirstUsed bool
	Revoked   bool         // set when the key is revoked (requests may still hold it)
	LastUsed  atomic.Int64 // kept in memory, saved in snapshots only

	// report API minute window, in memory only
	Minute      int64
	MinuteCount int
	// 1 + the index of Source in the workspace's sources, once a report
	// sent with the key was applied; 0: not yet (in memory only).
	sourceIx int
}

type Activity struct {
	ID      ID
	At      int64
	Type    string
	Actor   string
	KeyID   ID
	KeyName string
	AlertID ID
	JobID   ID
	Note    string
	// The client, channel or escalation rule the entry is about, and the
	// name of it (or of the job) at the time.
	SubjectID   ID
	SubjectName string
}

// Scopes of REST keys, as bits.
const (
	ScopeWorkspace uint8 = 1 << iota
	ScopeClients
	ScopeJobs
	ScopeReports
	ScopeAlerts
	ScopeHealth
	ScopeAll = ScopeWorkspace | ScopeClients | ScopeJobs | ScopeReports | ScopeAlerts | ScopeHealth
)

var ScopeNames = []struct {
	Bit  uint8
	Name string
}{
	{ScopeWorkspace, "workspace:read"},
	{ScopeClients, "clients:read"},
	{ScopeJobs, "jobs:read"},
	{ScopeReports, "reports:read"},
	{ScopeAlerts, "alerts:read"},
	{ScopeHealth, "health:read"},
}

// Vendors and their display names (decisions.md 6).
var VendorNames = map[string]string{
	"veeam":      "Veeam Backup & Replication",
	"acronis":    "Acronis Cyber Protect",
	"datto":      "Datto BCDR",
	"cove":       "N-able Cove Data Protection",
	"synology":   "Synology Active Backup for Business",
	"nakivo":     "NAKIVO Backup & Replication",
	"backupexec": "Veritas Backup Exec",
	"msp360":     "MSP360 Backup",
	"altaro":     "Hornetsecurity VM Backup (Altaro)",
	"macrium":    "Macrium Reflect",
	"generic":    "Generic",
	"custom":     "Custom (parsing rules)",
}

// vendorOrder lists the vendor identifiers; a job keeps its vendor's index
// (job.vx), which places its results in the result index.
var VendorOrder = [...]string{"veeam", "acronis", "datto", "cove", "synology", "nakivo", "backupexec", "msp360", "altaro", "macrium", "generic", "custom"}

const numVendors = len(VendorOrder)

// Vendors returns the vendor identifiers (decisions.md 6), in the order
// messages list them.
func Vendors() []string { return append([]string(nil), VendorOrder[:]...) }

// vendorIndex returns the index of vendor in vendorOrder, or -1.
func VendorIndex(vendor string) int {
	for i, v := range VendorOrder {
		if v == vendor {
			return i
		}
	}
	return -1
}

// setVendor sets the job's vendor, which must be one of vendorOrder.
func (j *Job) setVendor(vendor string) {
	j.Vendor = vendor
	j.Vx = uint8(max(VendorIndex(vendor), 0))
}

// VendorName returns the display name of a vendor identifier, or "" for an
// unknown one.
func VendorName(vendor string) string { return VendorNames[vendor] }

var DeviceTypes = map[string]bool{
	"server": true, "workstation": true, "vm": true, "nas": true,
	"cloud": true, "database": true, "other": true,
}

var Plans = map[string]bool{"starter": true, "growth": true, "pro": true, "trial": true}

var WorkspaceStatuses = map[string]bool{"active": true, "suspended": true, "cancelled": true}

var ClientStatuses = map[string]bool{"active": true, "paused": true, "archived": true}

var WeekdayNames = [7]string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// allDays has every weekday bit set.
const AllDays uint8 = 0x7f

func ResultName(s uint8) string {
	switch s {
	case ResultOK:
		return "ok"
	case ResultWarning:
		return "warning"
	case ResultFailed:
		return "failed"
	}
	return "none"
}

func AlertTypeName(t uint8) string {
	switch t {
	case AlertFailed:
		return "failed"
	case alertMissing:
		return "missing"
	case AlertWarning:
		return "warning"
	case AlertIntegrity:
		return "integrity"
	}
	return "unknown"
}

func SeverityName(s uint8) string {
	if s == SeverityCritical {
		return "critical"
	}
	return "warning"
}

func AlertStatusName(s uint8) string {
	switch s {
	case AlertOpen:
		return "open"
	case AlertAcknowledged:
		return "acknowledged"
	case AlertSnoozed:
		return "snoozed"
	}
	return "resolved"
}
