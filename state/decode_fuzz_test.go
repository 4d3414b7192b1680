package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"backupmon/codec"
)

// A workspace's encoding comes back from outside the process (imports,
// backups), so DecodeWorkspace must refuse, with an error, any blob whose
// parts do not hold together, and what it accepts must be a workspace the
// rest of the code can use: FuzzDecodeWorkspace checks both.

// fuzzT0 is when the seed workspaces begin; fuzzNow is the moment they are
// encoded at and the fuzz test looks at what it decodes.
const (
	fuzzT0  = int64(1_780_000_000_000)
	fuzzNow = fuzzT0 + 20*MsPerDay
)

// seedWorld builds a workspace for the fuzz seeds by applying records, as
// replay does.
type seedWorld struct {
	tb  testing.TB
	w   *Workspace
	ids *IDGen
	at  int64
}

func newSeedWorld(tb testing.TB, name, tz, plan string, trialEnds int64) *seedWorld {
	tb.Helper()
	ids := &IDGen{rng: rand.NewChaCha8([32]byte{1})} // the same seeds at every run
	w, err := NewWorkspace(&WorkspaceCreated{Header: Header{Workspace: ids.Next(fuzzT0), Seq: 1}, Name: name, TimeZone: tz, Plan: plan, Status: "active", TrialEndsAt: trialEnds, CreatedAt: fuzzT0})
	if err != nil {
		tb.Fatal(err)
	}
	return &seedWorld{tb: tb, w: w, ids: ids, at: fuzzT0}
}

// id returns a new id at the world's time.
func (x *seedWorld) id() ID { return x.ids.Next(x.at) }

// apply applies rec as the workspace's next record.
func (x *seedWorld) apply(rec Record) {
	x.tb.Helper()
	rec.Head().Workspace = x.w.ID
	rec.Head().Seq = x.w.Seq + 1
	if err := x.w.Apply(rec, NopHooks{}); err != nil {
		x.tb.Fatal(err)
	}
}

func (x *seedWorld) client(name, status string) ID {
	id := x.id()
	x.apply(&ClientCreated{ID: id, ActivityID: x.id(), Name: name, Status: status, CreatedAt: x.at})
	return id
}

func (x *seedWorld) job(client, device ID, name, vendor string, interval, grace int64, days uint8) ID {
	id := x.id()
	x.apply(&JobCreated{ID: id, ClientID: client, DeviceID: device, ActivityID: x.id(), Name: name, Vendor: vendor,
		DeviceName: "srv-" + name, DeviceType: "server", Hostname: name + ".example", IntervalMinutes: interval,
		GraceMinutes: grace, ExpectedDays: days, SLATarget: 95, CreatedAt: x.at, IngestToken: "tok-" + name})
	return id
}

// report records a result of job received at the world's time (plus
// early, a negative offset for one that arrives late); failed and warning
// results open or raise the job's alert. It returns the result's id.
func (x *seedWorld) report(job ID, status uint8, size int64, key string, early int64) ID {
	id := x.id()
	r := &Report{JobID: job, ResultID: id, Status: status, ReceivedAt: x.at + early, CompletedAt: x.at + early - MsPerMinute,
		DurationSeconds: 300, SizeBytes: size, IdempotencyKey: key, Source: "api:abcd"}
	switch status {
	case ResultFailed:
		r.AlertID, r.AlertType, r.Summary = x.id(), AlertFailed, "the backup failed: disk full"
		r.AICause, r.AIConfidence, r.AICategory = "The target is full.", "high", "storage"
	case ResultWarning:
		r.AlertID, r.AlertType, r.Summary = x.id(), AlertWarning, "3 files skipped"
	}
	x.apply(r)
	return id
}

// seedBlobs returns the encodings of a few realistic workspaces: an empty
// trial; small ones that each hold one part of a workspace (jobs and their
// results and alerts, notifications, people, e-mail and the model), so
// that a change the fuzzer makes to one of their few bytes is likely to
// land in a field; and one with some of everything, over three days.
func seedBlobs(tb testing.TB) [][]byte {
	empty := newSeedWorld(tb, "Empty trial", "America/New_York", "trial", fuzzT0+14*MsPerDay)

	jobs := newSeedWorld(tb, "Jobs", "Asia/Kathmandu", "starter", 0)
	c, off := jobs.client("Active", "active"), jobs.client("Off", "active")
	dev := jobs.id()
	nightly := jobs.job(c, dev, "nightly", "veeam", 1440, 60, AllDays)
	weekdays := jobs.job(c, dev, "Weekdays", "nakivo", 720, 30, 0x3e)
	hourly := jobs.job(off, jobs.id(), "hourly", "generic", 60, 5, AllDays)
	jobs.apply(&SizeDropSet{JobID: nightly, ActivityID: jobs.id(), Percent: 20, At: jobs.at})
	for day := range 4 {
		jobs.at += MsPerDay
		jobs.report(nightly, ResultOK, int64(10-3*day)*1_000_000_000, "", 0)
		jobs.report(hourly, ResultOK, -1, "", 0)
		if day == 3 {
			jobs.report(weekdays, ResultWarning, 1, "", 0)
			jobs.apply(&AlertChanged{AlertID: jobs.w.Jobs[weekdays].Alert.ID, ActivityID: jobs.id(), Action: AlertAcknowledge, At: jobs.at})
			jobs.report(hourly, ResultFailed, 0, "", -MsPerMinute)
		}
	}
	jobs.apply(&JobUpdated{ID: nightly, ActivityID: jobs.id(), Fields: JobPaused, Paused: true, At: jobs.at})
	jobs.apply(&ClientUpdated{ID: off, ActivityID: jobs.id(), Fields: ClientStatus, Status: "archived", At: jobs.at})

	notify := newSeedWorld(tb, "Notify", "UTC", "growth", 0)
	hook, psa := notify.id(), notify.id()
	notify.apply(&ChannelCreated{ID: hook, ActivityID: notify.id(), ChannelType: ChannelSlack, Name: "slack", URL: "https://hooks.example/x", MinSeverity: SeverityWarning, CreatedAt: notify.at})
	notify.apply(&TicketChannelCreated{ChannelCreated: ChannelCreated{ID: psa, ActivityID: notify.id(), ChannelType: ChannelHaloPSA, Name: "halo", MinSeverity: SeverityCritical, CreatedAt: notify.at},
		Settings: []Setting{{"tenant", "t"}}, Secrets: []Setting{{"secret", "s"}}})
	notify.apply(&EscalationCreated{ID: notify.id(), ActivityID: notify.id(), ChannelID: hook, AfterMinutes: 30, CreatedAt: notify.at})
	c = notify.client("Client", "active")
	notify.apply(&ClientMapped{ChannelID: psa, ClientID: c, Company: "C", At: notify.at})
	j := notify.job(c, notify.id(), "job", "cove", 60, 10, AllDays)
	notify.at += MsPerHour
	notify.report(j, ResultFailed, 0, "", 0)
	notify.apply(&TicketLinked{AlertID: notify.w.Jobs[j].Alert.ID, ChannelID: psa, Ticket: "42", At: notify.at})
	notify.apply(&DeliveryAttempted{DeliveryID: notify.w.Deliveries[0].ID, Attempt: 1, State: DeliveryRetry, Failure: "timeout", At: notify.at, NextAt: notify.at + DeliveryFirstRetryMs})
	notify.apply(&DeliveryAttempted{DeliveryID: notify.w.Deliveries[1].ID, Attempt: 1, State: DeliveryDelivered, At: notify.at})

	people := newSeedWorld(tb, "People", "Europe/Paris", "pro", 0)
	u := people.id()
	people.apply(&UserCreated{ID: u, ActivityID: people.id(), Email: "o@example.com", Name: "O", Role: RoleOwner, Hash: "h", CreatedAt: people.at})
	people.apply(&TwoFactorSet{UserID: u, ActivityID: people.id(), Secret: "S", Step: 3, Recovery: bytes.Repeat([]byte{1}, 64), At: people.at})
	people.apply(&InviteCreated{ID: people.id(), ActivityID: people.id(), Email: "i@example.com", Role: RoleMember, CreatedAt: people.at, ExpiresAt: people.at + InviteTTLMs})
	people.apply(&KeyCreated{ID: people.id(), ActivityID: people.id(), Name: "k", KeyType: "rest", Prefix: "pfx", Scopes: ScopeHealth, CreatedAt: people.at})
	people.at = fuzzNow - MsPerMinute
	people.apply(&SessionStarted{ID: people.id(), UserID: u, Hash: [32]byte{3}, At: people.at})

	mail := newSeedWorld(tb, "Mail", "UTC", "trial", fuzzT0+30*MsPerDay)
	c = mail.client("Client", "active")
	j = mail.job(c, mail.id(), "nas", "custom", 1440, 60, AllDays)
	mail.apply(&RuleSavedBy{RuleSaved: RuleSaved{ParseRule: ParseRule{ID: mail.id(), Name: "r", Spec: "{}", CreatedAt: mail.at, UpdatedAt: mail.at}}})
	mail.at += MsPerDay
	mail.report(j, ResultFailed, 0, "key-1", 0)
	mail.apply(&AIQueued{AIItem: AIItem{AlertID: mail.w.Jobs[j].Alert.ID, JobID: j, AlertType: AlertFailed, Vendor: "custom", JobName: "nas", Text: "t", QueuedAt: mail.at, NextAt: mail.at}})
	mail.apply(&AIAnswered{AlertID: mail.w.Jobs[j].Alert.ID, Outcome: AIDeferred, Called: true, At: mail.at, NextAt: mail.at + MsPerHour})
	mail.apply(&MailUnparsed{UnparsedMail: UnparsedMail{ID: mail.id(), JobID: j, ReceivedAt: mail.at, MessageID: "<m@x>", Reason: "no status", Vendor: "custom", RawRef: "r/1", Size: 10}})

	return [][]byte{empty.w.Encode(fuzzNow), jobs.w.Encode(fuzzNow), notify.w.Encode(fuzzNow), people.w.Encode(fuzzNow), mail.w.Encode(fuzzNow), richWorld(tb, 3).w.Encode(fuzzNow)}
}

// richWorld is a workspace with days of reports: clients paused and
// active, jobs of several vendors and schedules (two on one device, one
// paused, one deleted), results of every status (one out of order, one
// superseded, a size drop), alerts open, acknowledged, snoozed and
// resolved, channels with settings, maps, tickets and an escalation rule,
// deliveries pending and done, keys, users with sessions and two-factor
// sign-in, an invitation, unparsed e-mails, parsing rules, the model's
// queue and idempotency keys.
func richWorld(tb testing.TB, days int) *seedWorld {
	x := newSeedWorld(tb, "Rich MSP", "Europe/Berlin", "pro", 0)
	key := x.id()
	x.apply(&KeyCreated{ID: key, ActivityID: x.id(), Name: "reports", KeyType: "report", Prefix: "abcd", Hash: [32]byte{1, 2, 3}, Scopes: ScopeAll, CreatedAt: x.at})
	x.apply(&KeyCreated{ID: x.id(), ActivityID: x.id(), Name: "assistant", KeyType: "assistant", Prefix: "efgh", Hash: [32]byte{4}, Scopes: ScopeJobs | ScopeAlerts, ReadWrite: true, CreatedAt: x.at, ExpiresAt: x.at + 90*MsPerDay})
	x.apply(&KeyFirstUsed{ID: key, ActivityID: x.id(), At: x.at})

	hook := x.id()
	x.apply(&ChannelCreated{ID: hook, ActivityID: x.id(), ChannelType: ChannelWebhook, Name: "hook", URL: "https://example.com/hook", Secret: "whsec", MinSeverity: SeverityWarning, CreatedAt: x.at})
	psa := x.id()
	x.apply(&TicketChannelCreated{ChannelCreated: ChannelCreated{ID: psa, ActivityID: x.id(), ChannelType: ChannelConnectWise, Name: "cw", URL: "https://cw.example", MinSeverity: SeverityCritical, CreatedAt: x.at},
		Settings: []Setting{{"company", "msp"}, {"board", "Service"}}, Secrets: []Setting{{"privateKey", "secret"}}})
	x.apply(&EscalationCreated{ID: x.id(), ActivityID: x.id(), ChannelID: hook, AfterMinutes: 120, CreatedAt: x.at})

	acme, globex := x.client("Acme", "active"), x.client("globex", "active")
	x.apply(&ClientMapped{ChannelID: psa, ClientID: acme, Company: "ACME Corp", Board: "Backups", Ticket: "Incident", At: x.at})
	dev := x.id()
	nightly := x.job(acme, dev, "Nightly", "veeam", 1440, 60, AllDays)
	weekdays := x.job(acme, dev, "weekdays", "acronis", 1440, 120, 0x3e)
	hourly := x.job(globex, x.id(), "Hourly", "custom", 60, 15, AllDays)
	gone := x.job(globex, x.id(), "Gone", "datto", 720, 30, AllDays)
	x.apply(&SizeDropSet{JobID: hourly, ActivityID: x.id(), Percent: 30, At: x.at, Actor: "user:a@example.com"})

	owner, viewer := x.id(), x.id()
	x.apply(&UserCreated{ID: owner, ActivityID: x.id(), Email: "a@example.com", Name: "Ann", Role: RoleOwner, Hash: "$argon2id$x", CreatedAt: x.at})
	x.apply(&UserCreated{ID: viewer, ActivityID: x.id(), Email: "v@example.com", Name: "Vic", Role: RoleViewer, Hash: "$argon2id$y", CreatedAt: x.at})
	x.apply(&TwoFactorSet{UserID: owner, ActivityID: x.id(), Secret: "JBSWY3DPEHPK3PXP", Step: 1, Recovery: bytes.Repeat([]byte{7}, 32*RecoveryCodes), At: x.at})
	x.apply(&TwoFactorUsed{UserID: owner, Step: 2, Recovery: 3, At: x.at})
	x.apply(&TwoFactorRequired{ActivityID: x.id(), On: true, At: x.at})
	x.apply(&InviteCreated{ID: x.id(), ActivityID: x.id(), Email: "new@example.com", Role: RoleAdmin, Hash: [32]byte{9}, CreatedAt: x.at, ExpiresAt: x.at + InviteTTLMs})
	x.apply(&RuleSavedBy{RuleSaved: RuleSaved{ParseRule: ParseRule{ID: x.id(), Name: "NAS", Spec: `{"match":{"from":"nas@example.com"}}`, CreatedAt: x.at, UpdatedAt: x.at}}, Acted: Acted{ActivityID: x.id(), Actor: "user:a@example.com"}})
	x.apply(&RuleSavedBy{RuleSaved: RuleSaved{ParseRule: ParseRule{ID: x.id(), Name: "Tape", Spec: `{"match":{"subject":"tape"}}`, CreatedAt: x.at, UpdatedAt: x.at}}, Acted: Acted{ActivityID: x.id()}})
	x.apply(&AIPromptSet{Prompt: "Be brief.", At: x.at})

	var failedAlert ID
	for day := range days {
		x.at += MsPerDay
		x.report(nightly, ResultOK, int64(100+day)*1_000_000_000, "night-"+string(rune('a'+day)), 0)
		switch day % 4 {
		case 1:
			x.report(weekdays, ResultWarning, -1, "", 0)
		case 2:
			x.report(weekdays, ResultFailed, 0, "", 0)
			failedAlert = x.w.Jobs[weekdays].Alert.ID
		default:
			x.report(weekdays, ResultOK, 5_000_000, "", 0)
		}
		for h := range 3 {
			x.report(hourly, ResultOK, 2_000_000_000, "", int64(h)*MsPerHour)
		}
		if day < 3 {
			x.report(gone, ResultOK, 1, "", 0)
		}
	}
	x.report(hourly, ResultOK, 100_000_000, "", 0) // a size drop
	x.report(hourly, ResultOK, 2_000_000_000, "late", -90*MsPerMinute)
	sup := &Report{JobID: nightly, ResultID: x.id(), Status: ResultWarning, ReceivedAt: x.at + 1, CompletedAt: x.at - MsPerDay, DurationSeconds: -1, SizeBytes: -1, Superseded: true, Source: "mail"}
	x.apply(sup)
	x.report(weekdays, ResultFailed, 0, "", MsPerMinute)
	x.apply(&TicketLinked{AlertID: x.w.Jobs[weekdays].Alert.ID, ChannelID: psa, Ticket: "CW-1001", At: x.at})
	x.apply(&AIQueued{AIItem: AIItem{AlertID: failedAlert, JobID: weekdays, AlertType: AlertFailed, Vendor: "acronis", JobName: "weekdays", Text: "disk full", QueuedAt: x.at, NextAt: x.at + MsPerMinute}})
	x.apply(&AIAnswered{AlertID: failedAlert, Outcome: AIRetry, Called: true, At: x.at, NextAt: x.at + 5*MsPerMinute})

	x.at += MsPerHour
	x.apply(&Missed{JobID: hourly, AlertID: x.id(), Due: x.at - 20*MsPerMinute, At: x.at, Summary: "no report since 13:00"})
	x.apply(&AlertChanged{AlertID: x.w.Jobs[hourly].Alert.ID, ActivityID: x.id(), Action: AlertSnooze, Until: x.at + MsPerDay, At: x.at, Actor: "user:a@example.com", Note: "maintenance"})
	x.apply(&AlertChanged{AlertID: x.w.Jobs[weekdays].Alert.ID, ActivityID: x.id(), Action: AlertAcknowledge, At: x.at, Actor: "user:a@example.com"})
	for i, d := range x.w.Deliveries {
		switch i % 3 {
		case 0:
			x.apply(&DeliveryAttempted{DeliveryID: d.ID, Attempt: 1, State: DeliveryDelivered, At: x.at})
		case 1:
			x.apply(&DeliveryAttempted{DeliveryID: d.ID, Attempt: 1, State: DeliveryRetry, Failure: "503", At: x.at, NextAt: x.at + DeliveryFirstRetryMs})
		}
	}

	x.apply(&JobUpdated{ID: nightly, ActivityID: x.id(), Fields: JobPaused, Paused: true, PausedUntil: x.at + 2*MsPerDay, At: x.at, Actor: "user:a@example.com", Note: "migration"})
	x.apply(&JobDeleted{ID: gone, ActivityID: x.id(), At: x.at})
	x.apply(&ClientUpdated{ID: globex, ActivityID: x.id(), Fields: ClientStatus, Status: "paused", At: x.at})
	x.apply(&MailUnparsed{UnparsedMail: UnparsedMail{ID: x.id(), JobID: hourly, ReceivedAt: x.at, MessageID: "<m1@example.com>", Digest: "d1", Subject: "Backup report", From: "nas@example.com", Reason: "no status", Vendor: "custom", RawRef: "raw/1", Size: 2048}})
	x.apply(&RESTUsage{Month: 202606, Count: 42})

	x.at = fuzzNow - MsPerHour
	x.apply(&SessionStarted{ID: x.id(), UserID: owner, Hash: [32]byte{5}, At: x.at})
	x.apply(&SessionStarted{ID: x.id(), UserID: viewer, Hash: [32]byte{6}, At: x.at})
	return x
}

// FuzzDecodeWorkspace: DecodeWorkspace never panics, on any blob and any
// layout it reads; a workspace it returns encodes to a blob that decodes
// and encodes to the same bytes, its views (statuses, figures, SLA,
// overdue, size drops, trends, the REST objects) neither panic nor write
// anything but JSON, its indexes and links agree with its maps, and
// records applied to it leave a workspace that encodes and decodes still.
func FuzzDecodeWorkspace(f *testing.F) {
	for _, blob := range seedBlobs(f) {
		f.Add(blob, byte(0))
	}
	f.Fuzz(fuzzDecode)
}

// fuzzDecode is FuzzDecodeWorkspace's check of one input.
func fuzzDecode(t *testing.T, blob []byte, back byte) {
	t.Helper()
	// back picks the layout: 0 this build's, 1 the one before, and so on.
	version := SnapshotVersion - uint64(back)%(SnapshotVersion-OldestSnapshotVersion+1)
	w, err := DecodeWorkspace(blob, version)
	if err != nil {
		if w != nil {
			t.Fatalf("DecodeWorkspace returned a workspace with its error %v", err)
		}
		return
	}
	again := w.Encode(fuzzNow)
	w2, err := DecodeWorkspace(again, SnapshotVersion)
	if err != nil {
		t.Fatalf("a decoded workspace encodes to a blob DecodeWorkspace refuses: %v", err)
	}
	if third := w2.Encode(fuzzNow); !bytes.Equal(third, again) {
		t.Fatalf("encode, decode, encode differs:\n %x\n %x", again, third)
	}
	checkLinks(t, w)
	useDecoded(t, w, fuzzNow)
	useDecoded(t, w, fuzzNow+40*MsPerDay)
	changeDecoded(t, w, fuzzNow+41*MsPerDay)
}

// TestDecodeWorkspaceSeeds: the seed workspaces decode, pass the fuzz
// test's checks, and every strict prefix of their encodings is refused.
func TestDecodeWorkspaceSeeds(t *testing.T) {
	for i, blob := range seedBlobs(t) {
		w, err := DecodeWorkspace(blob, SnapshotVersion)
		if err != nil {
			t.Fatalf("seed %d: %v", i, err)
		}
		checkLinks(t, w)
		useDecoded(t, w, fuzzNow)
		changeDecoded(t, w, fuzzNow+MsPerDay)
		for cut := 0; cut < len(blob); cut += 1 + cut/64 {
			if _, err := DecodeWorkspace(blob[:cut], SnapshotVersion); err == nil {
				t.Fatalf("seed %d cut at %d of %d bytes decoded", i, cut, len(blob))
			}
		}
	}
}

// checkLinks checks that w's lists, indexes and pointers agree with its
// maps: every thing they lead to is the one its map holds under its id.
func checkLinks(t *testing.T, w *Workspace) {
	t.Helper()
	if len(w.JobList) != len(w.Jobs) || len(w.ClientList) != len(w.Clients) {
		t.Fatalf("%d jobs listed of %d, %d clients of %d", len(w.JobList), len(w.Jobs), len(w.ClientList), len(w.Clients))
	}
	inClients := 0
	for _, c := range w.ClientList {
		if w.Clients[c.ID] != c {
			t.Fatalf("client %s listed is not the workspace's", c.ID)
		}
		for id, j := range c.Jobs {
			if w.Jobs[id] != j || j.Client != c {
				t.Fatalf("job %s of client %s is not the workspace's job of that client", id, c.ID)
			}
		}
		inClients += len(c.Jobs)
	}
	if inClients != len(w.Jobs) {
		t.Fatalf("the clients hold %d jobs, the workspace %d", inClients, len(w.Jobs))
	}
	for _, j := range w.JobList {
		if w.Jobs[j.ID] != j || w.devices[j.Device.id] != j.Device {
			t.Fatalf("job %s listed, or its device, is not the workspace's", j.ID)
		}
		if VendorOrder[j.Vx] != j.Vendor {
			t.Fatalf("job %s of vendor %q is in the lists of %q", j.ID, j.Vendor, VendorOrder[j.Vx])
		}
		for i := range j.Results {
			r := &j.Results[i]
			if int(r.Source) >= len(w.sources) && r.Source != 0xffff {
				t.Fatalf("job %s: result %s of source %d, of %d", j.ID, r.ID, r.Source, len(w.sources))
			}
			if i > 0 && resultBefore(r, &j.Results[i-1]) {
				t.Fatalf("job %s: result %s out of order", j.ID, r.ID)
			}
		}
		if a := j.Alert; a != nil && (a.Job != j || w.Alerts[a.ID] != a || a.Status == AlertResolved) {
			t.Fatalf("job %s: its unresolved alert %s is not one", j.ID, a.ID)
		}
	}
	for _, a := range w.AlertLog {
		if w.Alerts[a.ID] != a || w.Jobs[a.Job.ID] != a.Job {
			t.Fatalf("alert %s logged is not the workspace's, or its job is not", a.ID)
		}
	}
	if len(w.AlertLog) != len(w.Alerts) {
		t.Fatalf("%d alerts logged of %d", len(w.AlertLog), len(w.Alerts))
	}
	for _, a := range w.Unresolved {
		if a.Job.Alert != a {
			t.Fatalf("unresolved alert %s is not its job's alert", a.ID)
		}
	}
	pending := 0
	for _, d := range w.Deliveries {
		if w.DeliveryIx[d.ID] != d {
			t.Fatalf("delivery %s is not the workspace's", d.ID)
		}
		if d.State == DeliveryPending {
			pending++
		}
	}
	if len(w.Deliveries) != len(w.DeliveryIx) || int64(pending) != w.Pending.Load() {
		t.Fatalf("%d deliveries of %d, %d pending counted %d", len(w.Deliveries), len(w.DeliveryIx), pending, w.Pending.Load())
	}
	for _, s := range w.Sessions {
		if w.Users[s.User.ID] != s.User {
			t.Fatalf("session %s of a user not the workspace's", s.ID)
		}
	}
}

// useDecoded reads w at now as the engine's read models do, checking that
// what is written as JSON is JSON.
func useDecoded(t *testing.T, w *Workspace, now int64) {
	t.Helper()
	valid := func(what string, b []byte) {
		t.Helper()
		if !json.Valid(b) {
			t.Fatalf("%s is not JSON: %s", what, b)
		}
	}
	valid("the workspace", w.AppendWorkspaceRecord(nil))
	for _, k := range w.Keys {
		valid("a key", AppendKeyRecord(nil, k))
	}
	w.AdvanceJobIndex(now)
	for s, list := range w.JobIdx.ByStatus {
		for _, j := range list {
			if got := w.JobStatus(j, now); got != StatusOrder[s] {
				t.Fatalf("job %s in the %s list is %s", j.ID, StatusOrder[s], got)
			}
		}
	}
	for _, j := range w.JobList {
		SLAOf(j, now)
		SizeDropOf(j).Summary()
		_ = w.OverdueOf(j, now).MissedText()
		w.StatusChangeAt(j, now)
		TrendOf(j, now, SLAPeriodDays, 20)
		valid("a job", w.AppendJob(nil, j, now))
		w.KeptFigures(j, now)
		for i := max(0, len(j.Results)-20); i < len(j.Results); i++ {
			valid("a result", AppendResult(nil, j, &j.Results[i]))
			w.Source(j.Results[i].Source)
		}
		for _, a := range j.Alerts {
			valid("an alert", AppendAlert(nil, a, now))
		}
	}
	for _, c := range w.ClientList {
		valid("a client", w.AppendClient(nil, c, now))
		valid("a client's health", AppendHealth(nil, w.Health(now, 7, c), c, now))
	}
	valid("the health", AppendHealth(nil, w.Health(now, SLAPeriodDays, nil), nil, now))
	w.HealthScan(now, SLAPeriodDays, nil)
	m := NewestFirst[ResultRef]{Older: RefOlder}
	w.Results.Walk(&m, 0, -1, math.MaxInt64, MaxID)
	for range 50 {
		r, _ := m.Next()
		if r == nil {
			break
		}
		valid("a result of the index", AppendResult(nil, r.Job, r.Res()))
	}
	for _, a := range w.Unresolved {
		w.NextEscalation(a)
	}
	for _, d := range w.Deliveries {
		w.Blocked(d)
	}
	for _, c := range w.Channels {
		for _, cm := range c.Maps {
			c.MapOf(cm.ClientID)
		}
	}
	for _, u := range w.Users {
		if u.TwoFactor != nil {
			u.TwoFactor.RecoveryLeft()
		}
	}
}

// changeDecoded applies records to w at at, as a replayed log or the
// engine's commands would (a record w refuses is fine), then prunes it,
// and checks that it still encodes to a blob that decodes.
func changeDecoded(t *testing.T, w *Workspace, at int64) {
	t.Helper()
	w.IDs.rng = rand.NewChaCha8([32]byte{2}) // ids the same at every run
	apply := func(rec Record) {
		rec.Head().Workspace, rec.Head().Seq = w.ID, w.Seq+1
		_ = w.Apply(rec, NopHooks{})
	}
	if n := len(w.JobList); n > 0 {
		j, last := w.JobList[0], w.JobList[n-1]
		apply(&Report{JobID: j.ID, ResultID: w.IDs.Next(at), Status: ResultFailed, ReceivedAt: at, CompletedAt: at, DurationSeconds: 5, SizeBytes: 10,
			IdempotencyKey: "k", Source: "mail", AlertID: w.IDs.Next(at), AlertType: AlertFailed, Summary: "failed"})
		apply(&Report{JobID: last.ID, ResultID: w.IDs.Next(at), Status: ResultOK, ReceivedAt: at - MsPerDay, CompletedAt: at - MsPerDay, DurationSeconds: -1, SizeBytes: -1, Source: "api:x"})
		apply(&JobUpdated{ID: j.ID, ActivityID: w.IDs.Next(at), Fields: JobName | JobVendor | JobSchedule | JobPaused | JobDevice, Name: "renamed", Vendor: "datto",
			DeviceID: w.IDs.Next(at), DeviceName: "d", DeviceType: "vm", Hostname: "h", IntervalMinutes: 60, GraceMinutes: 5, ExpectedDays: 0x41, Paused: true, At: at})
		apply(&JobDeleted{ID: last.ID, ActivityID: w.IDs.Next(at), At: at})
	}
	if len(w.Unresolved) > 0 {
		apply(&AlertChanged{AlertID: w.Unresolved[0].ID, ActivityID: w.IDs.Next(at), Action: AlertResolve, At: at})
	}
	if len(w.Channels) > 0 {
		apply(&ChannelDeleted{Removal{ID: w.Channels[0].ID, ActivityID: w.IDs.Next(at), At: at}})
	}
	if len(w.ClientList) > 0 {
		apply(&ClientUpdated{ID: w.ClientList[0].ID, ActivityID: w.IDs.Next(at), Fields: ClientName | ClientStatus, Name: "Zed", Status: "active", At: at})
	}
	for id := range w.Users {
		apply(&UserDeleted{Removal{ID: id, ActivityID: w.IDs.Next(at), At: at}})
		break
	}
	w.AdvanceJobIndex(at)
	w.Prune(at, 30*MsPerDay)
	if _, err := DecodeWorkspace(w.Encode(at), SnapshotVersion); err != nil {
		t.Fatalf("a decoded workspace, changed by records, encodes to a blob DecodeWorkspace refuses: %v", err)
	}
}

// TestDecodeWorkspaceRefuses: blobs whose parts do not hold together in
// ways a mutation of a byte or two does not reach (an id twice, a second
// unresolved alert, tickets of no alert...) are refused with an error
// that wraps codec.ErrInvalid, and the fuzz test's checks pass on them.
// Each is a seed workspace changed in memory, then encoded.
func TestDecodeWorkspaceRefuses(t *testing.T) {
	seeds := seedBlobs(t)
	notify, rich := seeds[2], richWorld(t, 3).w.Encode(fuzzNow)
	// decoded returns a fresh workspace of blob, to change.
	decoded := func(t *testing.T, blob []byte) *Workspace {
		t.Helper()
		w, err := DecodeWorkspace(blob, SnapshotVersion)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	// firstJob returns w's first job by name that is monitored at fuzzNow.
	firstJob := func(w *Workspace) *Job {
		for _, j := range w.JobList {
			if j.Monitored(fuzzNow) {
				return j
			}
		}
		panic("no monitored job")
	}
	other := ID{0xfe, 0xed} // a map key no id takes
	for _, tc := range []struct {
		name string
		blob func(t *testing.T) []byte
	}{
		{"a client twice", func(t *testing.T) []byte {
			w := decoded(t, rich)
			c := w.ClientList[0]
			w.Clients[other] = &Client{ID: c.ID, Name: "again", Status: "active", Jobs: map[ID]*Job{}}
			return w.Encode(fuzzNow)
		}},
		{"a job twice, on another client", func(t *testing.T) []byte {
			w := decoded(t, rich)
			j := *firstJob(w)
			j.Client = w.ClientList[len(w.ClientList)-1]
			w.Jobs[other] = &j
			return w.Encode(fuzzNow)
		}},
		{"a device twice", func(t *testing.T) []byte {
			w := decoded(t, rich)
			d := *firstJob(w).Device
			w.devices[other] = &d
			return w.Encode(fuzzNow)
		}},
		{"a key twice", func(t *testing.T) []byte {
			w := decoded(t, rich)
			for _, k := range w.Keys {
				w.Keys[other] = &Key{ID: k.ID, Name: k.Name, Type: k.Type, Prefix: "zz"}
				break
			}
			return w.Encode(fuzzNow)
		}},
		{"a user twice", func(t *testing.T) []byte {
			w := decoded(t, rich)
			for _, u := range w.Users {
				again := *u
				w.Users[other] = &again
				break
			}
			return w.Encode(fuzzNow)
		}},
		{"a session twice", func(t *testing.T) []byte {
			w := decoded(t, rich)
			for _, s := range w.Sessions {
				w.Sessions[other] = &Session{ID: s.ID, User: s.User, CreatedAt: s.CreatedAt, SeenAt: s.SeenAt}
				break
			}
			return w.Encode(fuzzNow)
		}},
		{"an alert twice", func(t *testing.T) []byte {
			w := decoded(t, rich)
			a := *w.AlertLog[0]
			a.Status = AlertResolved
			w.AlertLog = append(w.AlertLog, &a)
			return w.Encode(fuzzNow)
		}},
		{"a delivery twice", func(t *testing.T) []byte {
			w := decoded(t, rich)
			d := *w.Deliveries[0]
			w.Deliveries = append(w.Deliveries, &d)
			return w.Encode(fuzzNow)
		}},
		{"a second unresolved alert on a job", func(t *testing.T) []byte {
			w := decoded(t, rich)
			a := *w.Unresolved[0]
			a.ID, a.Status = w.IDs.Next(fuzzNow), AlertOpen
			w.AlertLog = append(w.AlertLog, &a)
			return w.Encode(fuzzNow)
		}},
		{"tickets of an alert that is not there", func(t *testing.T) []byte {
			w := decoded(t, notify)
			blob := w.Encode(fuzzNow)
			a := w.AlertLog[0].ID
			i := bytes.LastIndex(blob, a[:]) // the ticket list's, the last part to name it
			copy(blob[i:], other[:])
			return blob
		}},
		{"an alert's tickets twice", func(t *testing.T) []byte {
			w := decoded(t, notify)
			a := w.AlertLog[0]
			b := *a
			b.ID, b.Status = w.IDs.Next(fuzzNow), AlertResolved
			w.AlertLog = append(w.AlertLog, &b)
			blob := w.Encode(fuzzNow)
			i := bytes.LastIndex(blob, b.ID[:])
			copy(blob[i:], a.ID[:])
			return blob
		}},
		{"an SLA target not a number", func(t *testing.T) []byte {
			w := decoded(t, rich)
			firstJob(w).SLATarget = math.NaN()
			return w.Encode(fuzzNow)
		}},
		{"an SLA target of infinity", func(t *testing.T) []byte {
			w := decoded(t, rich)
			firstJob(w).SLATarget = math.Inf(-1)
			return w.Encode(fuzzNow)
		}},
		{"17 recovery codes", func(t *testing.T) []byte {
			w := decoded(t, rich)
			for _, u := range w.Users {
				if u.TwoFactor != nil {
					u.TwoFactor.Recovery = make([][32]byte, 17)
				}
			}
			return w.Encode(fuzzNow)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			blob := tc.blob(t)
			if _, err := DecodeWorkspace(blob, SnapshotVersion); !errors.Is(err, codec.ErrInvalid) {
				t.Fatalf("DecodeWorkspace answered %v, want an error of codec.ErrInvalid", err)
			}
			fuzzDecode(t, blob, 0)
		})
	}
}

// BenchmarkDecodeWorkspace decodes a workspace of 10 clients, 100 jobs
// and 10,000 results, as a restart decodes each workspace of a snapshot.
func BenchmarkDecodeWorkspace(b *testing.B) {
	x := newSeedWorld(b, "Bench", "Europe/Berlin", "pro", 0)
	var jobs []ID
	for c := range 10 {
		client := x.client("client "+string(rune('a'+c)), "active")
		for j := range 10 {
			jobs = append(jobs, x.job(client, x.id(), "job "+string(rune('a'+c))+string(rune('a'+j)), VendorOrder[j], 1440, 60, AllDays))
		}
	}
	for range 100 {
		x.at += MsPerHour
		for i, j := range jobs {
			st := ResultOK
			if i%17 == 0 {
				st = ResultWarning
			}
			x.report(j, st, 1_000_000_000, "", 0)
		}
	}
	blob := x.w.Encode(x.at)
	b.SetBytes(int64(len(blob)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeWorkspace(blob, SnapshotVersion); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDecodeWorkspaceByteSweep: every one-byte change of the small seeds
// (to 0, and to its complement) is refused or passes the fuzz test's
// checks. The fuzzer reaches these changes too, but only some of them in
// minutes; here they are all, in a second.
func TestDecodeWorkspaceByteSweep(t *testing.T) {
	for i, blob := range seedBlobs(t) {
		if len(blob) > 4096 {
			continue // the rich seed: its parts are those of the small ones
		}
		b := bytes.Clone(blob)
		for off, was := range blob {
			for _, v := range [2]byte{0, ^was} {
				b[off] = v
				func() {
					defer func() {
						if p := recover(); p != nil {
							t.Fatalf("seed %d, byte %d set to %#x: panic: %v", i, off, v, p)
						}
						if t.Failed() {
							t.Logf("seed %d, byte %d set to %#x", i, off, v)
						}
					}()
					fuzzDecode(t, b, 0)
				}()
			}
			b[off] = was
		}
	}
}
