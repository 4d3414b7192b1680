package engine

import (
	"sync/atomic"
	"time"
)

// Result statuses as stored (and as wal.Report.Status).
const (
	resultNone    uint8 = 0
	resultOK      uint8 = 1
	resultWarning uint8 = 2
	resultFailed  uint8 = 3
)

// Alert types and severities as stored.
const (
	alertFailed    uint8 = 1
	alertMissing   uint8 = 2
	alertWarning   uint8 = 3
	alertIntegrity uint8 = 4

	severityWarning  uint8 = 1
	severityCritical uint8 = 2
)

// Alert statuses as stored. Snoozed alerts whose snooze has ended read as
// open (see alertStatus).
const (
	alertOpen         uint8 = 1
	alertAcknowledged uint8 = 2
	alertSnoozed      uint8 = 3
	alertResolved     uint8 = 4
)

// workspace is the whole state of one workspace. Only its actor touches it.
type workspace struct {
	id          ID
	name        string
	timeZone    string
	loc         *time.Location
	plan        string
	status      string
	trialEndsAt int64 // 0: none
	createdAt   int64

	seq uint64 // sequence number of the last record applied
	ids *idGen

	scratch []byte // for encodings made only to be kept (keptFigures)

	// figVersion counts the changes that can move a derived figure (every
	// record but those of keys and REST usage, and retention); keptHealth
	// is the workspace's health as of one version.
	figVersion uint64
	keptHealth keptHealth

	clients  map[ID]*client
	jobs     map[ID]*job
	devices  map[ID]*device
	keys     map[ID]*apiKey
	alerts   map[ID]*alert
	alertLog []*alert // every alert, oldest first
	activity []activity
	sources  []string       // interned result sources; results hold an index
	sourceIx map[string]int // source → index in sources

	// Ordered indexes for the REST API's keyset pages (index.go).
	clientList []*client   // by (name without case, id)
	jobList    []*job      // by (name without case, id)
	jobIdx     jobIndex    // the jobs by status, vendor and last result, each by name
	results    resultIndex // every result, by (receivedAt, id), per status and vendor
	unresolved []*alert    // unresolved alerts, by (createdAt, id)

	// Notifications (notify.go): channels, escalation rules by
	// (afterMinutes, id), deliveries oldest first.
	channels    []*channel
	escalations []*escalation
	deliveries  []*delivery
	deliveryIx  map[ID]*delivery

	// Report e-mails whose status could not be read, oldest first
	// (mail.go), and the raw messages records let go of since the mail
	// store was last told.
	// Dashboard users and their live sessions (people.go).
	users    map[ID]*user
	sessions map[ID]*session

	unparsed   []*unparsedMail
	droppedRaw []string
	pending    atomic.Int64 // pending deliveries, read by the metrics off the actor
	trialNoted int64        // the trialEndsAt a TrialEnded record noted

	// Time-driven work (timers.go, missing.go) and what the record being
	// applied set off (notify.go); none of it is saved.
	timers  timerHeap // alert, delivery and trial instants
	missedQ []*job    // jobs turned missing whose alert is not recorded yet
	events  []alertEvent
	fresh   []*delivery // deliveries made by the last record applied

	// REST API limits: the current UTC minute and month and their counts.
	restMinute      int64
	restMinuteCount int64
	asstMinute      int64 // the assistant server's minute and its count (assistant.go)
	asstMinuteCount int64
	restMonth       int64 // year*100 + month
	restMonthCount  int64
}

type client struct {
	id        ID
	name      string
	status    string // active, paused, archived
	createdAt int64
	offAt     int64  // when the client was last paused or archived
	offSeq    uint64 // the workspace sequence number of that record: orders it against reports
	jobs      map[ID]*job
	key       string // name without case, the sort key
	jobList   []*job // its jobs by (name without case, id)
}

type device struct {
	id       ID
	clientID ID
	name     string
	typ      string
	hostname string
	jobs     int // jobs running on it
}

type job struct {
	id        ID
	client    *client
	device    *device
	name      string
	vendor    string
	vx        uint8 // the vendor's index in vendorOrder
	createdAt int64

	intervalMinutes int64
	graceMinutes    int64
	expectedDays    uint8 // bit d set: weekday d (time.Weekday) expected
	slaTarget       float64

	paused      bool   // the job's own pause
	pausedUntil int64  // 0: no end
	pausedAt    int64  // when the job's own pause began
	pausedSeq   uint64 // the workspace sequence number of the record that began it

	lastResult     uint8  // resultNone until the first report
	lastReportAt   int64  // completedAt of the latest non-superseded report; 0: none
	lastReceivedAt int64  // receipt time of that report
	lastReportSeq  uint64 // the workspace sequence number of that report's record
	lastSuccessAt  int64
	lastFailureAt  int64
	failureStreak  int
	dueBase        int64 // the time the next due time counts from

	results    []result // ordered by (receivedAt, id)
	resultBase uint32   // results dropped from the front so far: results[i] is result number resultBase+i (resultindex.go)
	idem       map[string]*idemEntry
	alert      *alert   // the unresolved alert, or nil
	alerts     []*alert // every alert of the job, by (createdAt, id)

	ingestToken string

	key       string // name without case, the sort key
	idxStatus uint8  // 1 + the index of the status list the job is in (jobindex.go); 0: none
	dirty     bool   // in jobIdx.dirty
	retime    bool   // in jobIdx.retime
	timerIx   int32  // 1 + its place in jobIdx.timers; 0: not there
	missedDue int64  // the due time whose passing opened (or raised) a missing alert
	missedQ   bool   // in workspace.missedQ
	json      []byte // the REST job object as last encoded
	jsonFrom  int64  // json is valid from this time (when it was encoded)
	jsonUntil int64  // to this time (0: not valid)
	// The status and the 30-day results json shows, valid with it.
	keptStatus string
	keptTally  tally
}

// result is one stored backup result, kept small: millions live in memory.
type result struct {
	id          ID
	receivedAt  int64
	completedAt int64
	sizeBytes   int64 // -1: none
	duration    int32 // seconds; -1: none
	status      uint8
	source      uint16 // index into workspace.sources
}

// idemEntry is a recorded idempotency key of one job.
type idemEntry struct {
	at      int64 // receipt time of the report that recorded it
	pending atomic.Bool
}

type alert struct {
	id             ID
	job            *job
	typ            uint8
	severity       uint8
	status         uint8
	summary        string
	ai             *aiNote // the catalogue's suggestion for summary; nil: none
	createdAt      int64
	acknowledgedAt int64
	snoozedUntil   int64
	resolvedAt     int64
	escChecked     int64 // escalation instants up to this one are done
}

type apiKey struct {
	id        ID
	name      string
	typ       string // rest, report, assistant
	prefix    string
	source    string // "api:" + prefix, the source of the results it reports
	hash      [32]byte
	scopes    uint8
	readWrite bool
	createdAt int64
	expiresAt int64 // 0: never
	firstUsed bool
	revoked   bool         // set when the key is revoked (requests may still hold it)
	lastUsed  atomic.Int64 // kept in memory, saved in snapshots only

	// report API minute window, in memory only
	minute      int64
	minuteCount int
}

type activity struct {
	id      ID
	at      int64
	typ     string
	actor   string
	keyID   ID
	keyName string
	alertID ID
	jobID   ID
	note    string
	// The client, channel or escalation rule the entry is about, and the
	// name of it (or of the job) at the time.
	subjectID   ID
	subjectName string
}

// Scopes of REST keys, as bits.
const (
	scopeWorkspace uint8 = 1 << iota
	scopeClients
	scopeJobs
	scopeReports
	scopeAlerts
	scopeHealth
	scopeAll = scopeWorkspace | scopeClients | scopeJobs | scopeReports | scopeAlerts | scopeHealth
)

var scopeNames = []struct {
	bit  uint8
	name string
}{
	{scopeWorkspace, "workspace:read"},
	{scopeClients, "clients:read"},
	{scopeJobs, "jobs:read"},
	{scopeReports, "reports:read"},
	{scopeAlerts, "alerts:read"},
	{scopeHealth, "health:read"},
}

// Vendors and their display names (decisions.md 6).
var vendorNames = map[string]string{
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
}

// vendorOrder lists the vendor identifiers; a job keeps its vendor's index
// (job.vx), which places its results in the result index.
var vendorOrder = [...]string{"veeam", "acronis", "datto", "cove", "synology", "nakivo", "backupexec", "msp360", "altaro", "macrium", "generic"}

const numVendors = len(vendorOrder)

// Vendors returns the vendor identifiers (decisions.md 6), in the order
// messages list them.
func Vendors() []string { return append([]string(nil), vendorOrder[:]...) }

// vendorIndex returns the index of vendor in vendorOrder, or -1.
func vendorIndex(vendor string) int {
	for i, v := range vendorOrder {
		if v == vendor {
			return i
		}
	}
	return -1
}

// setVendor sets the job's vendor, which must be one of vendorOrder.
func (j *job) setVendor(vendor string) {
	j.vendor = vendor
	j.vx = uint8(max(vendorIndex(vendor), 0))
}

// VendorName returns the display name of a vendor identifier, or "" for an
// unknown one.
func VendorName(vendor string) string { return vendorNames[vendor] }

var deviceTypes = map[string]bool{
	"server": true, "workstation": true, "vm": true, "nas": true,
	"cloud": true, "database": true, "other": true,
}

var plans = map[string]bool{"starter": true, "growth": true, "pro": true, "trial": true}

var workspaceStatuses = map[string]bool{"active": true, "suspended": true, "cancelled": true}

var clientStatuses = map[string]bool{"active": true, "paused": true, "archived": true}

var weekdayNames = [7]string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// allDays has every weekday bit set.
const allDays uint8 = 0x7f

func resultName(s uint8) string {
	switch s {
	case resultOK:
		return "ok"
	case resultWarning:
		return "warning"
	case resultFailed:
		return "failed"
	}
	return "none"
}

func alertTypeName(t uint8) string {
	switch t {
	case alertFailed:
		return "failed"
	case alertMissing:
		return "missing"
	case alertWarning:
		return "warning"
	case alertIntegrity:
		return "integrity"
	}
	return "unknown"
}

func severityName(s uint8) string {
	if s == severityCritical {
		return "critical"
	}
	return "warning"
}

func alertStatusName(s uint8) string {
	switch s {
	case alertOpen:
		return "open"
	case alertAcknowledged:
		return "acknowledged"
	case alertSnoozed:
		return "snoozed"
	}
	return "resolved"
}
