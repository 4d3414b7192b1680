package state

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"time"

	"backupmon/codec"
)

// A workspace's part of a snapshot is written and read by one walk over its
// state (walk and the entities' own walk methods): the same code appends
// each field when writing and reads it into place when reading, so the
// layout is said once.

// SnapshotVersion is the layout Encode writes. DecodeWorkspace also reads
// every older layout back to OldestSnapshotVersion: each change of layout
// adds a version and reads the older ones through the version checks in
// the walk (and the migrations they call).
const (
	SnapshotVersion       = 11
	OldestSnapshotVersion = 5
)

// IdemKeepMs is how long idempotency keys are kept (decisions.md 3).
const IdemKeepMs = 30 * MsPerDay

// snap is one walk of a workspace's snapshot.
type snap struct {
	ws      *Workspace
	f       *codec.Fields
	version uint64 // the layout walked
	now     int64  // writing: what is still alive at now is kept
}

func (s *snap) reading() bool { return s.f.Decoding() }

// since reports whether the walked layout has fields added in version v.
func (s *snap) since(v uint64) bool { return s.version >= v }

// Encode returns the workspace's whole state at now (idempotency keys and
// sessions that have expired left out).
func (w *Workspace) Encode(now int64) []byte {
	s := &snap{ws: w, f: codec.Encoder(make([]byte, 0, 4096)), version: SnapshotVersion, now: now}
	if err := w.walk(s); err != nil {
		panic("state: encode: " + err.Error()) // writing never fails
	}
	return s.f.Bytes()
}

// DecodeWorkspace rebuilds a workspace from what Encode wrote in layout
// version (OldestSnapshotVersion to SnapshotVersion).
func DecodeWorkspace(blob []byte, version uint64) (*Workspace, error) {
	if version < OldestSnapshotVersion || version > SnapshotVersion {
		return nil, fmt.Errorf("snapshot layout %d, this build reads %d to %d", version, OldestSnapshotVersion, SnapshotVersion)
	}
	w := &Workspace{
		IDs: NewIDGen(), Clients: map[ID]*Client{}, Jobs: map[ID]*Job{}, devices: map[ID]*device{},
		Keys: map[ID]*Key{}, Alerts: map[ID]*Alert{}, sourceIx: map[string]int{},
		DeliveryIx: map[ID]*Delivery{}, Users: map[ID]*User{}, Sessions: map[ID]*Session{},
	}
	s := &snap{ws: w, f: codec.Decoder(blob), version: version}
	err := w.walk(s)
	if err == nil {
		err = s.f.Done()
	}
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", w.ID, err)
	}
	if version < 6 {
		w.OrderOffAndReports()
	}
	w.RebuildIndexes()
	return w, nil
}

// walk walks the whole workspace.
func (w *Workspace) walk(s *snap) error {
	f := s.f
	f.Walk(w.ID[:], &w.Seq, &w.Name, &w.TimeZone, &w.Plan, &w.Status, &w.TrialEndsAt, &w.createdAt, &w.RESTMonth, &w.RESTMonthCount)
	if s.reading() {
		if err := f.Err(); err != nil {
			return err
		}
		// The plan and status are written into JSON as they are (no
		// escaping: they are words of a set), so they must be of theirs.
		if !Plans[w.Plan] || !WorkspaceStatuses[w.Status] {
			return fmt.Errorf("plan %q or status %q not of this build's: %w", w.Plan, w.Status, codec.ErrInvalid)
		}
		loc, err := time.LoadLocation(w.TimeZone)
		if err != nil {
			return fmt.Errorf("time zone %q: %w", w.TimeZone, err)
		}
		w.Loc = loc
		w.IDs.Observe(w.ID)
	}
	codec.Slice(f, &w.sources, 1, func(f *codec.Fields, src *string) { f.String(src) })
	if s.reading() {
		for i, src := range w.sources {
			w.sourceIx[src] = i
		}
	}
	if err := walkMap(s, "client", w.Clients, func() *Client { return &Client{Jobs: map[ID]*Job{}} }, (*Client).walk, nil); err != nil {
		return err
	}
	if err := walkMap(s, "device", w.devices, func() *device { return &device{} }, (*device).walk, nil); err != nil {
		return err
	}
	if err := walkMap(s, "job", w.Jobs, func() *Job { return &Job{} }, (*Job).walk, nil); err != nil {
		return err
	}
	if err := walkMap(s, "key", w.Keys, func() *Key { return &Key{} }, (*Key).walk, nil); err != nil {
		return err
	}
	if err := walkList(s, &w.AlertLog, func() *Alert { return &Alert{} }, (*Alert).walk); err != nil {
		return err
	}
	codec.Slice(f, &w.Activity, 16, func(f *codec.Fields, a *Activity) { a.walk(s, w) })
	f.Varint(&w.TrialNoted)
	if err := walkList(s, &w.Channels, func() *Channel { return &Channel{} }, (*Channel).walk); err != nil {
		return err
	}
	if err := walkList(s, &w.Escalations, func() *Escalation { return &Escalation{} }, (*Escalation).walk); err != nil {
		return err
	}
	if err := walkList(s, &w.Deliveries, func() *Delivery { return &Delivery{} }, (*Delivery).walk); err != nil {
		return err
	}
	if err := walkList(s, &w.Unparsed, func() *UnparsedMail { return &UnparsedMail{} }, (*UnparsedMail).walk); err != nil {
		return err
	}
	if err := walkMap(s, "user", w.Users, func() *User { return &User{} }, (*User).walk, nil); err != nil {
		return err
	}
	if err := walkMap(s, "session", w.Sessions, func() *Session { return &Session{} }, (*Session).walk, func(x *Session) bool { return x.alive(s.now) }); err != nil {
		return err
	}
	if s.since(7) {
		if err := w.walkPSA(s); err != nil {
			return err
		}
	}
	if s.since(8) {
		if err := w.walkRules(s); err != nil {
			return err
		}
	}
	if s.since(9) {
		if err := w.walkSizeDrops(s); err != nil {
			return err
		}
	}
	if s.since(10) {
		if err := w.walkPeople(s); err != nil {
			return err
		}
	}
	if s.since(11) {
		return w.walkIdem(s)
	}
	return nil
}

// walkIdem walks the workspace's idempotency keys that are younger than
// IdemKeepMs at the snapshot's time (version 11 on; before, each job
// walked its own keys: walkIdemV10).
func (w *Workspace) walkIdem(s *snap) error {
	f := s.f
	var list []idemKept
	if !s.reading() {
		list = w.Idem.sorted(s.now)
	}
	n := f.Count(len(list), len(IdemDigest{})+1)
	for i := 0; i < n && f.Err() == nil; i++ {
		var k idemKept
		if !s.reading() {
			k = list[i]
		}
		f.Fixed(k.d[:])
		f.Varint(&k.at)
		if s.reading() {
			w.Idem.Put(k.d, k.at)
		}
	}
	return f.Err()
}

// entity is a value of a workspace's snapshot: walk walks its fields and,
// when reading, links it into w; key is its id.
type entity interface {
	comparable
	key() ID
}

// walkMap walks the values of m that keep keeps (nil: all), in the order
// of their ids when writing, so that one state always gives the same bytes;
// reading, each value is made by mk, walked and added to m, and an id met
// twice is an error (what names the values in it).
func walkMap[V entity](s *snap, what string, m map[ID]V, mk func() V, walk func(V, *snap, *Workspace) error, keep func(V) bool) error {
	w := s.w()
	var list []V
	if !s.reading() {
		list = make([]V, 0, len(m))
		for _, v := range m {
			if keep == nil || keep(v) {
				list = append(list, v)
			}
		}
		slices.SortFunc(list, func(a, b V) int {
			ak, bk := a.key(), b.key()
			return bytes.Compare(ak[:], bk[:])
		})
	}
	n := s.f.Count(len(list), 1)
	for i := 0; i < n && s.f.Err() == nil; i++ {
		v := mk()
		if !s.reading() {
			v = list[i]
		}
		if err := walk(v, s, w); err != nil {
			return err
		}
		if s.reading() && s.f.Err() == nil {
			// An id twice would leave the first value linked to what it
			// holds (a client's jobs, a job's alerts) but gone from m.
			n := len(m)
			if m[v.key()] = v; len(m) == n {
				return fmt.Errorf("%s %s twice: %w", what, v.key(), codec.ErrInvalid)
			}
		}
	}
	return s.f.Err()
}

// walkList walks a list in its order; reading, each value is made by mk,
// walked and appended.
func walkList[V any](s *snap, list *[]V, mk func() V, walk func(V, *snap, *Workspace) error) error {
	w := s.w()
	n := s.f.Count(len(*list), 1)
	if s.reading() {
		*list = make([]V, 0, n)
	}
	for i := 0; i < n && s.f.Err() == nil; i++ {
		var v V
		if s.reading() {
			v = mk()
		} else {
			v = (*list)[i]
		}
		if err := walk(v, s, w); err != nil {
			return err
		}
		if s.reading() && s.f.Err() == nil {
			*list = append(*list, v)
		}
	}
	return s.f.Err()
}

// observe moves the workspace's id generator past an id read (nothing
// when writing), so that ids made after a restart sort after it.
func (s *snap) observe(id ID) error {
	if s.reading() {
		s.ws.IDs.Observe(id)
	}
	return nil
}

// w is the workspace walked, for the entities that link into it.
func (s *snap) w() *Workspace { return s.ws }

func (c *Client) key() ID { return c.ID }

func (c *Client) walk(s *snap, w *Workspace) error {
	f := s.f
	f.Walk(c.ID[:], &c.Name, &c.Status, &c.createdAt, &c.OffAt)
	if s.since(6) {
		f.Uvarint(&c.OffSeq)
	}
	if s.reading() && f.Err() == nil && !ClientStatuses[c.Status] {
		return fmt.Errorf("client %s: status %q not of this build's: %w", c.ID, c.Status, codec.ErrInvalid) // written into JSON unescaped
	}
	return s.observe(c.ID)
}

func (d *device) key() ID { return d.id }

func (d *device) walk(s *snap, w *Workspace) error {
	f := s.f
	f.Walk(d.id[:], d.clientID[:], &d.Name, &d.Type, &d.Hostname)
	return s.observe(d.id)
}

func (j *Job) key() ID { return j.ID }

func (j *Job) walk(s *snap, w *Workspace) error {
	f := s.f
	var clientID, deviceID ID
	if !s.reading() {
		clientID, deviceID = j.Client.ID, j.Device.id
	}
	vendor := j.Vendor
	f.Walk(j.ID[:], clientID[:], deviceID[:], &j.Name, &vendor, &j.CreatedAt, &j.IntervalMinutes, &j.GraceMinutes, &j.ExpectedDays, &j.SLATarget, &j.Paused, &j.PausedUntil, &j.PausedAt, &j.LastResult, &j.LastReportAt, &j.LastReceivedAt, &j.LastSuccessAt, &j.LastFailureAt)
	if j.LastResult > ResultFailed {
		// The last result picks the job's list in the job index (ByLast):
		// one past them would index out of it.
		f.Fail(fmt.Errorf("job %s: last result %d of %d: %w", j.ID, j.LastResult, ResultFailed+1, codec.ErrInvalid))
	}
	if math.IsNaN(j.SLATarget) || math.IsInf(j.SLATarget, 0) {
		// The job object writes the target as a JSON number.
		f.Fail(fmt.Errorf("job %s: SLA target %v: %w", j.ID, j.SLATarget, codec.ErrInvalid))
	}
	if j.IntervalMinutes <= 0 {
		// Due times step by the interval, and the runs a job missed are
		// counted by dividing by it (OverdueOf).
		f.Fail(fmt.Errorf("job %s: interval of %d minutes: %w", j.ID, j.IntervalMinutes, codec.ErrInvalid))
	}
	if s.since(6) {
		f.Walk(&j.PausedSeq, &j.LastReportSeq)
	}
	f.Walk(&j.FailureStreak, &j.DueBase, &j.IngestToken, &j.MissedDue)
	var prev int64
	var last *Result
	sources := len(w.sources)
	codec.Slice(f, &j.Results, 16, func(f *codec.Fields, r *Result) {
		f.Fixed(r.ID[:])
		f.Delta(&r.ReceivedAt, prev)
		prev = r.ReceivedAt
		f.Delta(&r.CompletedAt, r.ReceivedAt)
		// Direct calls, not Walk's type switch: a snapshot holds millions
		// of results.
		f.Varint(&r.SizeBytes)
		f.Int32(&r.Duration)
		f.Byte(&r.Status)
		f.Uint16(&r.Source)
		// The status places the result in the result index's lists
		// (resultIndex.part): one out of range would index past them.
		if r.Status-ResultOK > ResultFailed-ResultOK {
			f.Fail(fmt.Errorf("job %s: result %s: status %d of %d to %d: %w", j.ID, r.ID, r.Status, ResultOK, ResultFailed, codec.ErrInvalid))
		}
		// The source is an index into the workspace's sources, or 0xffff
		// for a source the full table could not take (intern).
		if int(r.Source) >= sources && r.Source != 0xffff {
			f.Fail(fmt.Errorf("job %s: result %s: source %d of %d: %w", j.ID, r.ID, r.Source, sources, codec.ErrInvalid))
		}
		// A job's results are in receipt order (insertResult): the
		// searches over them (pages, retention, the SLA window) rely on it.
		if last != nil && resultBefore(r, last) {
			f.Fail(fmt.Errorf("job %s: result %s received before the one ahead of it: %w", j.ID, r.ID, codec.ErrInvalid))
		}
		last = r
	})
	if !s.since(11) {
		if err := j.walkIdemV10(s, w); err != nil {
			return err
		}
	}
	if !s.reading() || f.Err() != nil {
		return f.Err()
	}
	// The vendor's index places the job and its results in the indexes'
	// vendor lists; an unknown one would file them under the first vendor.
	vx := VendorIndex(vendor)
	if vx < 0 {
		return fmt.Errorf("job %s: vendor %q not of this build's: %w", j.ID, vendor, codec.ErrInvalid)
	}
	j.Vendor, j.Vx = vendor, uint8(vx)
	if n := len(j.Results); n > 0 {
		w.IDs.Observe(j.Results[n-1].ID)
	}
	c, d := w.Clients[clientID], w.devices[deviceID]
	if c == nil || d == nil {
		return fmt.Errorf("job %s: unknown client %s or device %s", j.ID, clientID, deviceID)
	}
	j.Client, j.Device = c, d
	d.jobs++
	c.Jobs[j.ID] = j
	w.IDs.Observe(j.ID)
	return nil
}

// walkIdemV10 reads the job's idempotency keys of a snapshot before
// version 11 into the workspace's table. Only reading comes here.
func (j *Job) walkIdemV10(s *snap, w *Workspace) error {
	f := s.f
	n := f.Count(0, 2)
	for i := 0; i < n && f.Err() == nil; i++ {
		var k string
		var at int64
		f.Walk(&k, &at)
		w.Idem.Put(IdemDigestOf(j.ID, k), at)
	}
	return f.Err()
}

func (k *Key) key() ID { return k.ID }

func (k *Key) walk(s *snap, w *Workspace) error {
	f := s.f
	lastUsed := k.LastUsed.Load()
	f.Walk(k.ID[:], &k.Name, &k.Type, &k.Prefix, k.Hash[:], &k.Scopes, &k.ReadWrite, &k.CreatedAt, &k.ExpiresAt, &k.FirstUsed, &lastUsed)
	if s.reading() && f.Err() == nil {
		switch k.Type { // written into JSON unescaped
		case "rest", "report", "assistant":
		default:
			return fmt.Errorf("key %s: type %q not of this build's: %w", k.ID, k.Type, codec.ErrInvalid)
		}
		k.Source = "api:" + k.Prefix
		k.LastUsed.Store(lastUsed)
		w.IDs.Observe(k.ID)
	}
	return nil
}

func (a *Alert) walk(s *snap, w *Workspace) error {
	f := s.f
	var jobID ID
	if !s.reading() {
		jobID = a.Job.ID
	}
	hasAI := a.AI != nil
	f.Walk(a.ID[:], jobID[:], &a.Type, &a.Severity, &a.Status, &a.Summary, &a.CreatedAt, &a.AcknowledgedAt, &a.SnoozedUntil, &a.ResolvedAt, &a.EscChecked, &hasAI)
	if hasAI {
		if s.reading() {
			a.AI = &aiNote{}
		}
		f.Walk(&a.AI.Cause, &a.AI.Confidence, &a.AI.Category)
	}
	if !s.reading() || f.Err() != nil {
		return f.Err()
	}
	if a.Job = w.Jobs[jobID]; a.Job == nil {
		return fmt.Errorf("alert %s of unknown job %s", a.ID, jobID)
	}
	n := len(w.Alerts)
	if w.Alerts[a.ID] = a; len(w.Alerts) == n {
		return fmt.Errorf("alert %s twice: %w", a.ID, codec.ErrInvalid)
	}
	if a.Status != AlertResolved {
		// A job has one unresolved alert, which reports raise and resolve:
		// a second would stay open in the unresolved list for good.
		if a.Job.Alert != nil {
			return fmt.Errorf("alert %s: job %s has unresolved alert %s already: %w", a.ID, jobID, a.Job.Alert.ID, codec.ErrInvalid)
		}
		a.Job.Alert = a
	}
	w.IDs.Observe(a.ID)
	return nil
}

func (a *Activity) walk(s *snap, w *Workspace) {
	f := s.f
	f.Walk(a.ID[:], &a.At, &a.Type, &a.Actor, a.KeyID[:], &a.KeyName, a.AlertID[:], a.JobID[:], &a.Note, a.SubjectID[:], &a.SubjectName)
	if s.reading() {
		w.IDs.Observe(a.ID)
	}
}

func (c *Channel) walk(s *snap, w *Workspace) error {
	f := s.f
	f.Walk(c.ID[:], &c.Type, &c.Name, &c.URL, &c.To, &c.Secret, &c.MinSeverity, &c.CreatedAt)
	return s.observe(c.ID)
}

func (e *Escalation) walk(s *snap, w *Workspace) error {
	f := s.f
	f.Walk(e.ID[:], e.ChannelID[:], &e.AfterMinutes, &e.CreatedAt)
	return s.observe(e.ID)
}

// walk walks a delivery, and the notice of one still pending.
func (d *Delivery) walk(s *snap, w *Workspace) error {
	f := s.f
	f.Walk(d.ID[:], d.ChannelID[:], d.AlertID[:], d.JobID[:], &d.Event, &d.CreatedAt, &d.State, &d.Attempts, &d.NextAt, &d.FirstOutcome, &d.LastAttemptAt, &d.DeliveredAt, &d.LastError)
	hasNotice := d.Notice != nil
	f.Bool(&hasNotice)
	if hasNotice {
		if s.reading() {
			d.Notice = &Notice{Workspace: w.ID, Event: d.Event}
		}
		n := d.Notice
		f.Walk(&n.Alert, &n.Job, &n.WorkspaceName, &n.ClientName, &n.JobName, &n.AlertType, &n.Severity, &n.Summary)
	}
	if !s.reading() || f.Err() != nil {
		return f.Err()
	}
	if d.State == DeliveryPending && d.Notice == nil {
		return fmt.Errorf("pending delivery %s without its notice", d.ID)
	}
	n := len(w.DeliveryIx)
	if w.DeliveryIx[d.ID] = d; len(w.DeliveryIx) == n {
		return fmt.Errorf("delivery %s twice: %w", d.ID, codec.ErrInvalid)
	}
	if d.State == DeliveryPending {
		w.Pending.Add(1)
	}
	return nil
}

func (u *UnparsedMail) walk(s *snap, w *Workspace) error {
	u.fields(s.f)
	return s.observe(u.ID)
}

func (u *User) key() ID { return u.ID }

func (u *User) walk(s *snap, w *Workspace) error {
	f := s.f
	f.Walk(u.ID[:], &u.Email, &u.Name, &u.Role, &u.Hash, &u.CreatedAt)
	return s.observe(u.ID)
}

func (x *Session) key() ID { return x.ID }

// walk walks a session (only those alive are written: Workspace.walk).
func (x *Session) walk(s *snap, w *Workspace) error {
	f := s.f
	var userID ID
	if !s.reading() {
		userID = x.User.ID
	}
	f.Walk(x.ID[:], userID[:], x.Hash[:], &x.CreatedAt, &x.SeenAt)
	if !s.reading() || f.Err() != nil {
		return f.Err()
	}
	x.LoggedAt = x.SeenAt
	if x.User = w.Users[userID]; x.User == nil {
		return fmt.Errorf("session %s of unknown user %s", x.ID, userID)
	}
	w.IDs.Observe(x.ID)
	return nil
}
