package engine

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"backupmon/state"
)

// The workload's steps of the parts added after the first ones
// (replay_test.go has the first): notification channels, escalations and
// the deliverer's outcomes, PSA channels and their tickets, parsing rules,
// size-drop settings, people (users, sessions, invitations, two-factor
// sign-in), suggestions from a model, changes made by a person in the
// dashboard, REST reads, a trial that ends and is extended, and a
// workspace moved in from another engine. Each calls the engine's public
// commands as the admin API, the dashboard, the deliverer or the model's
// asker would, with the workload's random numbers only.

// wlChannel is a channel the workload made, and its type.
type wlChannel struct{ id, typ string }

// extraState is what the workload keeps of a workspace's later parts (a
// field of wsState, owned by the workspace's goroutine).
type extraState struct {
	restKey     [32]byte
	users       []*wlUser
	sessions    []wlSession
	invites     []wlInvite
	channels    []wlChannel
	escalations []string
	rules       []string
	trial       bool
	required    bool  // two-factor sign-in
	made        int   // a counter for names, hashes and secrets
	deck        []int // the extraKinds still to deal
}

// Deliver queues a notice for the workspace's step to answer (Deliverer).
func (l *workload) Deliver(n Notice) {
	l.hmu.Lock()
	defer l.hmu.Unlock()
	id := n.Workspace.String()
	l.notices[id] = append(l.notices[id], n)
}

// Ask queues a question for the workspace's step to answer (AIAsker).
func (l *workload) Ask(req AIRequest) {
	l.hmu.Lock()
	defer l.hmu.Unlock()
	l.asks[req.Workspace] = append(l.asks[req.Workspace], req)
}

// settle waits until what s's actor did so far has run and its records
// are durable, so that the notices and questions it handed out are queued:
// the step that takes them takes the same ones in every run of a seed. It
// is the test's only use of the engine's insides (an actor round trip and
// a log barrier): it waits, it changes nothing.
func (l *workload) settle(s *wsState) {
	a, err := l.e.workspaceActor(s.id)
	check(l.t, "actor", err)
	// Twice: an ask is answered from within its message, before the
	// actor runs the timers that came due (afterMessage), whose records
	// and notices the second round trip puts before the barrier.
	for range 2 {
		ask(a, func(*workspace) struct{} { return struct{}{} })
	}
	check(l.t, "log barrier", l.e.barrier())
}

// takeNotices returns and clears s's queued notices, in the order of
// their deliveries' ids (the order they were made) and attempts: they come
// from the actor and from the log's committer, in either order.
func (l *workload) takeNotices(s *wsState) []Notice {
	return take(l, s, l.notices, func(a, b Notice) int {
		return cmp.Or(bytes.Compare(a.Delivery[:], b.Delivery[:]), cmp.Compare(a.Attempt, b.Attempt))
	})
}

// takeAsks returns and clears s's queued questions, in the order of their
// alerts' ids and attempts.
func (l *workload) takeAsks(s *wsState) []AIRequest {
	return take(l, s, l.asks, func(a, b AIRequest) int {
		return cmp.Or(strings.Compare(a.AlertID, b.AlertID), cmp.Compare(a.Attempt, b.Attempt))
	})
}

// take settles s, then returns and clears its queue in queues, sorted by
// order.
func take[T any](l *workload, s *wsState, queues map[string][]T, order func(a, b T) int) []T {
	l.settle(s)
	l.hmu.Lock()
	defer l.hmu.Unlock()
	q := queues[s.id]
	delete(queues, s.id)
	slices.SortStableFunc(q, order)
	return q
}

// allow fails the test for an error that is no refusal (allowed).
func (l *workload) allow(what string, err error) bool {
	if !allowed(err) {
		l.t.Fatalf("%s: %v", what, err)
	}
	return err == nil
}

// extraKinds are the kinds of extraStep, each as many times as it comes in
// one deal of the workspace's deck.
var extraKinds = []func(l *workload, s *wsState){
	(*workload).channelChange, (*workload).channelChange, (*workload).channelChange,
	(*workload).answerNotices, (*workload).answerNotices, (*workload).answerNotices,
	(*workload).answerQuestions,
	(*workload).userChange, (*workload).userChange,
	(*workload).sessionChange, (*workload).sessionChange, (*workload).sessionChange,
	(*workload).inviteChange,
	(*workload).twoFactorChange, (*workload).twoFactorChange,
	(*workload).ruleChange,
	(*workload).sizeDrop,
	(*workload).setup, (*workload).setup,
	(*workload).restRead,
	(*workload).unparsedMail,
	(*workload).mail, (*workload).mail, // as often as the first steps had them
	(*workload).trialChange,
}

// extraStep runs one random command of the later parts on s: its kind is
// dealt from a shuffled deck of extraKinds, so that every kind comes as
// often as the deck says in any stretch of steps.
func (l *workload) extraStep(s *wsState) {
	x := &s.extra
	if len(x.deck) == 0 {
		x.deck = s.rng.Perm(len(extraKinds))
	}
	k := x.deck[0]
	x.deck = x.deck[1:]
	extraKinds[k](l, s)
}

// unparsedMail sends an e-mail no rule reads, or drops or re-reads one
// from the unparsed list.
func (l *workload) unparsedMail(s *wsState) {
	if s.rng.IntN(3) == 0 {
		l.unparsedAction(s)
		return
	}
	l.mailTo(s, &MailInput{MessageID: fmt.Sprintf("u%d@host", s.rng.IntN(1000)), DurationSeconds: -1, SizeBytes: -1,
		Reason: "no status", Subject: "backup report", From: "nas@example.com", RawRef: fmt.Sprintf("%032x", s.rng.Uint64()), Size: 100})
}

// mailTo sends in to a random job's ingest address, as the SMTP listener
// does.
func (l *workload) mailTo(s *wsState, in *MailInput) {
	j := s.jobs[s.rng.IntN(len(s.jobs))]
	v, err := l.e.JobDetail(s.id, j.id, 1)
	check(l.t, "job", err)
	var jv struct{ IngestAddress string }
	check(l.t, "decode job", json.Unmarshal(v.JSON, &jv))
	token, _, _ := strings.Cut(jv.IngestAddress, "@")
	if rep := l.e.Mail(token, in); rep.Outcome == MailNotRecorded {
		l.t.Fatalf("mail not recorded")
	}
}

// channelSettings are valid settings and secrets of each channel type.
var channelSettings = map[string][2]map[string]string{
	state.ChannelConnectWise: {{"url": "https://cw.example.com/v4_6_release/apis/3.0", "company": "msp", "publicKey": "pub",
		"clientId": "cid", "defaultCompany": "Catchall", "board": "Service Desk", "closedStatus": "Closed"}, {"privateKey": "priv"}},
	state.ChannelAutotask: {{"username": "api@msp.test", "integrationCode": "code", "defaultCompany": "7", "queue": "8",
		"priority": "2"}, {"secret": "s"}},
	state.ChannelHaloPSA: {{"url": "https://halo.example.com/api", "authUrl": "https://halo.example.com/auth", "clientId": "cid",
		"defaultCompany": "12", "closedStatus": "9"}, {"clientSecret": "s"}},
	state.ChannelTeams:     {nil, {"url": "https://teams.example.com/hook"}},
	state.ChannelPagerDuty: {nil, {"routingKey": "0123456789abcdef0123456789abcdef"}},
}

var channelTypeNames = []string{state.ChannelWebhook, state.ChannelSlack, state.ChannelEmail, state.ChannelConnectWise,
	state.ChannelAutotask, state.ChannelHaloPSA, state.ChannelTeams, state.ChannelPagerDuty}

// channelChange makes a channel (deletes one of four first), makes or deletes
// an escalation rule, or maps a client to a PSA company.
func (l *workload) channelChange(s *wsState) {
	r, x := s.rng, &s.extra
	switch n := r.IntN(10); {
	case n < 3 || len(x.channels) == 0:
		if len(x.channels) >= 4 {
			i := r.IntN(len(x.channels))
			if l.allow("delete channel", l.e.DeleteChannel(s.id, x.channels[i].id, "user:admin@example.com")) {
				x.channels = slices.Delete(x.channels, i, i+1)
			}
		}
		typ := channelTypeNames[r.IntN(len(channelTypeNames))]
		in := ChannelInput{Type: Some(typ), Name: Some(fmt.Sprintf("%s %d", typ, r.IntN(100))), Actor: "user:admin@example.com"}
		switch typ {
		case state.ChannelWebhook, state.ChannelSlack:
			in.URL = Some("https://hooks.example.com/" + typ)
		case state.ChannelEmail:
			in.To = Some("ops@example.com")
		default:
			in.Settings, in.Secrets = channelSettings[typ][0], channelSettings[typ][1]
		}
		if r.IntN(3) == 0 {
			in.MinSeverity = Some("critical")
		}
		v, err := l.e.CreateChannel(s.id, in)
		if l.allow("create channel", err) {
			x.channels = append(x.channels, wlChannel{v.ID, typ})
			if state.IsPSA(typ) {
				l.mapClient(s, x.channels[len(x.channels)-1])
			}
		}
	case n < 5:
		c := x.channels[r.IntN(len(x.channels))]
		in := EscalationInput{ChannelID: Some(c.id), AfterMinutes: Some(int64([]int{15, 60, 180, 600}[r.IntN(4)]))}
		v, err := l.e.CreateEscalation(s.id, in)
		if l.allow("create escalation", err) {
			x.escalations = append(x.escalations, v.ID)
		}
	case n < 8 && len(x.escalations) > 0:
		i := r.IntN(len(x.escalations))
		if l.allow("delete escalation", l.e.DeleteEscalation(s.id, x.escalations[i], "")) {
			x.escalations = slices.Delete(x.escalations, i, i+1)
		}
	default:
		var psa []wlChannel
		for _, c := range x.channels {
			if state.IsPSA(c.typ) {
				psa = append(psa, c)
			}
		}
		if len(psa) > 0 {
			l.mapClient(s, psa[r.IntN(len(psa))])
		}
	}
}

// mapClient maps a client to a company of PSA channel c, or unmaps it.
func (l *workload) mapClient(s *wsState, c wlChannel) {
	r := s.rng
	client := s.clients[r.IntN(len(s.clients))]
	if r.IntN(4) == 0 {
		l.allow("unmap client", l.e.UnmapClient(s.id, c.id, client))
		return
	}
	company := "AcmeCo"
	if c.typ != state.ChannelConnectWise {
		company = fmt.Sprint(100 + r.IntN(50))
	}
	_, err := l.e.MapClient(s.id, c.id, client, ClientMapInput{Company: Some(company)})
	l.allow("map client", err)
}

// answerNotices answers the notices handed to the deliverer as a
// deliverer would: delivered, failed for now or for good, with a ticket
// made in a PSA; some get no answer and time out.
func (l *workload) answerNotices(s *wsState) {
	notices := l.takeNotices(s)
	r := s.rng
	var keep, lost []Notice
	for _, n := range notices {
		switch r.IntN(6) {
		case 0:
			lost = append(lost, n) // no answer: the attempt times out, or drain answers late
			continue
		case 1:
			keep = append(keep, n) // answered in a later step
			continue
		}
		l.answerNotice(s, n)
	}
	l.hmu.Lock()
	if len(keep) > 0 {
		l.notices[s.id] = append(keep, l.notices[s.id]...)
	}
	if len(lost) > 0 {
		l.lost[s.id] = append(l.lost[s.id], lost...)
	}
	l.hmu.Unlock()
	l.settle(s)
}

// answerNotice gives the outcome of notice n's attempt.
func (l *workload) answerNotice(s *wsState, n Notice) {
	r := s.rng
	if r.IntN(4) == 0 {
		check(l.t, "delivery done", l.e.DeliveryDone(n.Workspace, n.Delivery, n.Attempt, ""))
		return
	}
	var o Outcome
	switch r.IntN(4) {
	case 0:
		o.Failure = "HTTP 503"
	case 1:
		o.Failure, o.Permanent = "HTTP 401: Unauthorized", true
	}
	if state.IsPSA(n.Channel.Type) {
		o.Ticket = n.Channel.Ticket
		if o.Ticket == "" && r.IntN(3) > 0 {
			o.Ticket = fmt.Sprint(1000 + r.IntN(9000))
		}
	}
	check(l.t, "delivery outcome", l.e.DeliveryOutcome(n.Workspace, n.Delivery, n.Attempt, o))
}

// drain answers every notice and question handed out, and those the
// answers set off, until none is left: nothing is then in flight. The
// determinism tests compare the live state with a restarted one, and a
// restart forgets what is in flight (neither is saved) and acts on it at
// start-up, as decisions.md says: a delivery that came due is tried
// again, or cancelled for a client paused meanwhile, where the live engine
// waits for the attempt's outcome.
func (l *workload) drain() {
	for _, s := range l.ws {
		l.hmu.Lock()
		late := l.lost[s.id]
		delete(l.lost, s.id)
		l.hmu.Unlock()
		for _, n := range late {
			l.answerNotice(s, n) // ignored when the attempt timed out
		}
		for {
			notices, asks := l.takeNotices(s), l.takeAsks(s)
			if len(notices) == 0 && len(asks) == 0 {
				break
			}
			for _, n := range notices {
				l.answerNotice(s, n)
			}
			for _, q := range asks {
				l.answerQuestion(s, q)
			}
		}
	}
}

// answerQuestions answers the model's questions as the asker would: a
// suggestion, a failure worth retrying, or an answer that is no
// suggestion; and now and then sets the workspace's prompt.
func (l *workload) answerQuestions(s *wsState) {
	r := s.rng
	if r.IntN(2) == 0 {
		check(l.t, "set prompt", l.e.SetAIPrompt(s.id, fmt.Sprintf("You help an MSP. Be brief (%d).", r.IntN(10))))
	}
	if r.IntN(2) == 0 {
		l.mailTo(s, &MailInput{MessageID: fmt.Sprintf("f%d@host", r.IntN(1000)), Status: ReportFailed, DurationSeconds: -1, SizeBytes: -1,
			Summary: fmt.Sprintf("error %d: the repository is locked", r.IntN(5))}) // a question for the model
	}
	asks := l.takeAsks(s)
	for _, q := range asks {
		l.answerQuestion(s, q)
	}
	l.settle(s)
}

// answerQuestion gives the model's answer to q.
func (l *workload) answerQuestion(s *wsState, q AIRequest) {
	r := s.rng
	res := AIResult{Workspace: q.Workspace, AlertID: q.AlertID, Attempt: q.Attempt}
	switch r.IntN(4) {
	case 0:
		res.Err = errors.New("HTTP 503")
	case 1:
		res.Err, res.Dropped = errors.New("not a suggestion"), true
	default:
		res.Suggestion = Suggestion{Cause: fmt.Sprintf("The repository is locked (%d).", r.IntN(10)), Confidence: "medium", Category: "storage"}
	}
	l.e.AIDone(res)
}

// ruleChange makes (deleting one of two first), changes or reorders
// parsing rules (their JSON as the transport checked it).
func (l *workload) ruleChange(s *wsState) {
	r, x := s.rng, &s.extra
	spec := func(name string) string {
		return fmt.Sprintf(`{"match":{"subject":{"contains":"job %d"}},"name":%q,"status":{"failed":["error"],"ok":["success"]}}`, r.IntN(1000), name)
	}
	by := ""                 // the admin API, or (with an odd count of rules) a person; no draw from r, so that
	if len(x.rules)%2 == 1 { // the steps after this one stay those of the golden directories
		by = "user:rules@workload.test"
	}
	switch n := r.IntN(6); {
	case n < 2 || len(x.rules) < 2:
		if len(x.rules) >= 2 {
			i := r.IntN(len(x.rules))
			if l.allow("delete rule", l.e.DeleteParseRule(s.id, x.rules[i], by)) {
				x.rules = slices.Delete(x.rules, i, i+1)
			}
		}
		name := fmt.Sprintf("rule %d", r.IntN(100))
		v, err := l.e.SaveParseRule(s.id, "", name, spec(name), by)
		if l.allow("save rule", err) {
			x.rules = append(x.rules, v.ID)
		}
	case n < 4:
		_, err := l.e.SaveParseRule(s.id, x.rules[r.IntN(len(x.rules))], "changed", spec("changed"), by)
		l.allow("change rule", err)
	default:
		r.Shuffle(len(x.rules), func(i, j int) { x.rules[i], x.rules[j] = x.rules[j], x.rules[i] })
		_, err := l.e.OrderParseRules(s.id, x.rules, by)
		l.allow("order rules", err)
	}
}

// sizeDrop sets, clears or turns off a job's size-drop threshold.
func (l *workload) sizeDrop(s *wsState) {
	r := s.rng
	if len(s.jobs) == 0 {
		return
	}
	p := Some(int64([]int{0, 20, 50, 80}[r.IntN(4)]))
	if r.IntN(4) == 0 {
		p = Opt[int64]{Set: true, Null: true}
	}
	l.allow("size drop", l.e.SetSizeDrop(s.id, s.jobs[r.IntN(len(s.jobs))].id, p, "user:admin@example.com"))
}

// setup makes or changes a client, or makes or deletes a job, through
// the admin API or as a person in the dashboard does (the records that name
// them).
func (l *workload) setup(s *wsState) {
	r := s.rng
	by := []string{"", "user:admin@example.com", "user:owner@example.com"}[r.IntN(3)]
	switch r.IntN(4) {
	case 0:
		if len(s.clients) < 16 {
			v, err := l.e.CreateClient(s.id, ClientInput{Name: Some(fmt.Sprintf("client %d", r.IntN(100))), Actor: by})
			check(l.t, "create client", err)
			s.clients = append(s.clients, v.ID)
		}
	case 1:
		_, err := l.e.UpdateClient(s.id, s.clients[r.IntN(len(s.clients))], ClientInput{Name: Some(fmt.Sprintf("renamed %d", r.IntN(100))), Actor: by})
		check(l.t, "update client", err)
	case 2:
		client := s.clients[r.IntN(len(s.clients))]
		v, err := l.e.CreateJob(s.id, JobInput{ClientID: Some(client), Name: Some(fmt.Sprintf("job %d", r.IntN(100))),
			Vendor: Some("veeam"), Device: Some(DeviceInput{Name: Some("pc"), Type: Some("workstation"), Hostname: Some("pc-1")}),
			Schedule: Some(ScheduleInput{IntervalMinutes: Some(int64(60))}), Actor: by})
		check(l.t, "create job", err)
		s.jobs = append(s.jobs, jobRef{v.ID, client})
	default:
		if len(s.jobs) > 4 {
			i := r.IntN(len(s.jobs))
			check(l.t, "delete job", l.e.DeleteJobBy(s.id, s.jobs[i].id, by))
			s.jobs = slices.Delete(s.jobs, i, i+1)
		}
	}
}

// restRead reads the jobs through the REST API with the workspace's REST
// key (the month's count on a plan with a quota), now and then with a new
// key that replaces it (its first use).
func (l *workload) restRead(s *wsState) {
	if s.rng.IntN(2) == 0 {
		kv, err := l.e.CreateKey(s.id, KeyInput{Name: Some("rest"), Type: Some("rest"), Scopes: Some([]string{"jobs:read"})})
		check(l.t, "create rest key", err)
		s.extra.restKey = HashKey([]byte(kv.Key))
	}
	if a := l.e.REST(s.extra.restKey, &RESTQuery{Endpoint: EndpointJobs, Limit: 5}, nil); a.Outcome == RESTFailed {
		l.t.Fatalf("REST read failed")
	}
}

// trialChange gives a trial workspace a trial that ends within hours:
// extended when it ended, as an operator would.
func (l *workload) trialChange(s *wsState) {
	if !s.extra.trial {
		return
	}
	end := l.e.Now().Add(time.Duration(1+s.rng.IntN(6)) * time.Hour)
	_, err := l.e.UpdateWorkspace(s.id, WorkspaceInput{TrialEndsAt: Some(end)})
	check(l.t, "extend trial", err)
}

// importWorkspace moves a small workspace in from another engine (a shard
// moving): its ImportPart records.
func (l *workload) importWorkspace() {
	t := l.t
	other := openTestEngine(t, t.TempDir())
	closeAtEnd(t, other)
	_, err := other.SetClock(l.e.Now(), 0)
	check(t, "set clock", err)
	ws, job := monitoredJob(t, other, 1440, 60)
	var history []ImportInput
	for d := 300; d > 0; d-- {
		history = append(history, ImportInput{ReceivedAt: l.e.Now().Add(-time.Duration(d) * 24 * time.Hour), Status: uint8(1 + d%3),
			DurationSeconds: int64(d), SizeBytes: int64(d) << 20, Source: "email:veeam"})
	}
	check(t, "import reports", other.ImportReports(ws, job, history))
	blob, err := other.ExportWorkspace(ws)
	check(t, "export", err)
	check(t, "import", l.e.ImportWorkspace(blob, state.SnapshotVersion))
}

// takeLaterViews takes the views of the parts added later into x, passing
// each error to must.
func takeLaterViews(e *Engine, wsID string, x *wsViews, must func(error)) {
	errs := []error{later(&x.Channels, e.Channels, wsID), later(&x.Escalations, e.Escalations, wsID),
		later(&x.Deliveries, e.Deliveries, wsID), later(&x.Users, e.Users, wsID), later(&x.Invites, e.Invites, wsID),
		later(&x.Rules, e.ParseRules, wsID), later(&x.AIPrompt, e.AIPrompt, wsID)}
	for _, err := range errs {
		must(err)
	}
}

// later sets *dst to view's answer for workspace wsID and returns its error.
func later[T any](dst *T, view func(string) (T, error), wsID string) error {
	v, err := view(wsID)
	*dst = v
	return err
}
