package engine

// The admin API's reads. Views are copies of state built inside an actor
// and handed to callers; they never point into the workspace. Their JSON is
// the contract's shape: the REST objects' JSON (state's encoders), with the
// id beside it for callers that go on to use it.

import (
	"backupmon/jsonx"
	"backupmon/state"
	"sort"
	"strings"
)

// Workspace returns one workspace record.
func (e *Engine) Workspace(id string) (WorkspaceView, error) {
	return read(e, id, (*workspace).view)
}

// Workspaces returns every workspace record, oldest first.
func (e *Engine) Workspaces() []WorkspaceView {
	actors := e.sortedActors()
	list := make([]WorkspaceView, 0, len(actors))
	for _, a := range actors {
		list = append(list, ask(a, (*workspace).view))
	}
	return list
}

// Clients returns every client of a workspace, by name.
func (e *Engine) Clients(wsID string) ([]ClientView, error) {
	return read(e, wsID, func(w *workspace) []ClientView {
		now := e.nowMs()
		return viewsByName(w.Clients, func(c *state.Client) string { return c.Name },
			func(c *state.Client) ClientView { return w.clientView(c, now) })
	})
}

// Jobs returns every job of a workspace, by name.
func (e *Engine) Jobs(wsID string) ([]JobView, error) {
	return read(e, wsID, func(w *workspace) []JobView {
		now := e.nowMs()
		return viewsByName(w.Jobs, func(j *state.Job) string { return j.Name },
			func(j *state.Job) JobView { return e.adminJobView(w, j, now) })
	})
}

// viewsOf returns the views of things, in their order: an empty list, not
// nil, when there are none.
func viewsOf[T, V any](things []T, view func(T) V) []V {
	views := make([]V, len(things))
	for i, t := range things {
		views[i] = view(t)
	}
	return views
}

// viewsByName returns the views of the things of m (by id), ordered by
// name without case, then id (state.NameBefore).
func viewsByName[T, V any](m map[state.ID]*T, name func(*T) string, view func(*T) V) []V {
	ids := make([]state.ID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, k int) bool { return state.NameBefore(name(m[ids[i]]), ids[i], name(m[ids[k]]), ids[k]) })
	return viewsOf(ids, func(id state.ID) V { return view(m[id]) })
}

// recentResultsCount is how many results /jobs/{jobId} embeds.
const recentResultsCount = 20

// JobDetail returns the admin API's job: the REST job object with its
// unresolved alerts, its ingest address, and "history", its results newest
// first (up to limit), each with its source. The REST detail's
// "recentResults" is left out: history is the list docs/spec/decisions.md
// names, and it holds the same results with their sources.
func (e *Engine) JobDetail(wsID, jobID string, limit int) (JobView, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return JobView{}, err
	}
	v := ask(a, func(w *workspace) JobView {
		j := w.Job(jobID)
		if j == nil {
			return JobView{}
		}
		b := e.withIngestAddress(w.appendJobAlerts(nil, j, e.nowMs(), 0), j)
		b = append(b[:len(b)-1], `,"history":[`...)
		for i, n := len(j.Results)-1, 0; i >= 0 && n < limit; i, n = i-1, n+1 {
			if n > 0 {
				b = append(b, ',')
			}
			r := &j.Results[i]
			b = state.AppendResult(b, j, r)
			b = append(b[:len(b)-1], `,"source":`...)
			b = jsonx.AppendString(b, w.Source(r.Source))
			b = append(b, '}')
		}
		b = append(b, "]}"...)
		return JobView{ID: j.ID.String(), JSON: b}
	})
	if v.ID == "" {
		return JobView{}, notFound("job")
	}
	return v, nil
}

// Keys returns the workspace's keys without secrets, oldest first.
func (e *Engine) Keys(wsID string) ([]KeyView, error) {
	return read(e, wsID, func(w *workspace) []KeyView {
		list := make([]*state.Key, 0, len(w.Keys))
		for _, k := range w.Keys {
			list = append(list, k)
		}
		sort.Slice(list, func(i, j int) bool { return string(list[i].ID[:]) < string(list[j].ID[:]) })
		views := make([]KeyView, len(list))
		for i, k := range list {
			views[i] = keyView(k)
		}
		return views
	})
}

// Alerts returns every alert of the workspace, newest first.
func (e *Engine) Alerts(wsID string) ([]AlertView, error) {
	return read(e, wsID, func(w *workspace) []AlertView {
		now := e.nowMs()
		views := make([]AlertView, 0, len(w.AlertLog))
		for i := len(w.AlertLog) - 1; i >= 0; i-- {
			views = append(views, alertView(w.AlertLog[i], now))
		}
		return views
	})
}

// Activity returns the workspace's activity log, newest first.
func (e *Engine) Activity(wsID string) ([]ActivityView, error) {
	return read(e, wsID, func(w *workspace) []ActivityView {
		views := make([]ActivityView, 0, len(w.Activity))
		for i := len(w.Activity) - 1; i >= 0; i-- {
			v := activityView(&w.Activity[i])
			if v.JobName == "" && v.JobID != "" {
				// Alert actions recorded before they kept the job's name:
				// its name now, while it exists.
				if j := w.Jobs[w.Activity[i].JobID]; j != nil {
					v.JobName = j.Name
				}
			}
			views = append(views, v)
		}
		return views
	})
}

// View is an object the admin API answers with: its id, for callers that
// go on to use it, and its JSON, which is what it marshals to.
type View struct {
	ID   string
	JSON []byte
}

// MarshalJSON returns the object's JSON.
func (v View) MarshalJSON() ([]byte, error) { return v.JSON, nil }

// WorkspaceView is a workspace record (decisions.md 4.1).
type WorkspaceView = View

// ClientView is a client object (decisions.md 4.2).
type ClientView = View

// JobView is a job object (api.md 2.5); for the admin job view, with its
// recent results, unresolved alerts and history.
type JobView = View

// AlertView is an alert object (api.md 2.7).
type AlertView = View

// UnparsedView is an unparsed e-mail's entry (decisions.md 10).
type UnparsedView = View

// KeyView is a key record without its secret (decisions.md 2); Key holds the
// secret only in the answer to its creation.
type KeyView struct {
	ID   string
	Key  string
	JSON []byte
}

// MarshalJSON returns the record's JSON, with "key" when Key is set.
func (v KeyView) MarshalJSON() ([]byte, error) {
	if v.Key == "" {
		return v.JSON, nil
	}
	b := append([]byte(nil), v.JSON[:len(v.JSON)-1]...)
	b = append(b, `,"key":`...)
	b = jsonx.AppendString(b, v.Key)
	return append(b, '}'), nil
}

func (w *workspace) view() WorkspaceView {
	return WorkspaceView{ID: w.ID.String(), JSON: w.AppendWorkspaceRecord(nil)}
}

func (w *workspace) clientView(c *state.Client, now int64) ClientView {
	return ClientView{ID: c.ID.String(), JSON: w.AppendClient(nil, c, now)}
}

func alertView(a *state.Alert, now int64) AlertView {
	return AlertView{ID: a.ID.String(), JSON: state.AppendAlert(nil, a, now)}
}

func keyView(k *state.Key) KeyView {
	return KeyView{ID: k.ID.String(), JSON: state.AppendKeyRecord(nil, k)}
}

// ActivityView is an activity log entry.
type ActivityView struct {
	ID      string     `json:"id"`
	At      state.Time `json:"at"`
	Type    string     `json:"type"`
	Actor   string     `json:"actor"`
	KeyID   string     `json:"keyId,omitempty"`
	KeyName string     `json:"keyName,omitempty"`
	AlertID string     `json:"alertId,omitempty"`
	JobID   string     `json:"jobId,omitempty"`
	JobName string     `json:"jobName,omitempty"`
	// ClientID, ChannelID, EscalationID and RuleID name what a client.*,
	// channel.*, escalation.* or rule.* entry is about; Name is its name
	// then.
	ClientID     string `json:"clientId,omitempty"`
	ChannelID    string `json:"channelId,omitempty"`
	EscalationID string `json:"escalationId,omitempty"`
	RuleID       string `json:"ruleId,omitempty"`
	Name         string `json:"name,omitempty"`
	Note         string `json:"note,omitempty"`
}

func activityView(a *state.Activity) ActivityView {
	v := ActivityView{ID: a.ID.String(), At: state.Time(a.At), Type: a.Type, Actor: a.Actor, KeyName: a.KeyName, Note: a.Note}
	if !a.KeyID.IsZero() {
		v.KeyID = a.KeyID.String()
	}
	if !a.AlertID.IsZero() {
		v.AlertID = a.AlertID.String()
	}
	if !a.JobID.IsZero() {
		v.JobID = a.JobID.String()
		v.JobName = a.SubjectName
	}
	if !a.SubjectID.IsZero() {
		switch {
		case strings.HasPrefix(a.Type, "client."):
			v.ClientID = a.SubjectID.String()
		case strings.HasPrefix(a.Type, "channel."):
			v.ChannelID = a.SubjectID.String()
		case strings.HasPrefix(a.Type, "escalation."):
			v.EscalationID = a.SubjectID.String()
		case strings.HasPrefix(a.Type, "rule."):
			v.RuleID = a.SubjectID.String()
		}
		v.Name = a.SubjectName
	}
	return v
}

func (w *workspace) unparsedView(u *state.UnparsedMail) UnparsedView {
	b := append([]byte(nil), `{"id":`...)
	b = state.AppendID(b, u.ID)
	b = append(b, `,"jobId":`...)
	b = state.AppendID(b, u.JobID)
	b = append(b, `,"jobName":`...)
	if j := w.Jobs[u.JobID]; j != nil {
		b = jsonx.AppendString(b, j.Name)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"vendor":`...)
	b = jsonx.AppendString(b, u.Vendor)
	b = append(b, `,"receivedAt":`...)
	b = jsonx.AppendTime(b, u.ReceivedAt)
	b = append(b, `,"messageId":`...)
	b = appendNullString(b, u.MessageID)
	b = append(b, `,"subject":`...)
	b = jsonx.AppendString(b, u.Subject)
	b = append(b, `,"from":`...)
	b = jsonx.AppendString(b, u.From)
	b = append(b, `,"sizeBytes":`...)
	b = jsonx.AppendInt(b, u.Size)
	b = append(b, `,"reason":`...)
	b = jsonx.AppendString(b, u.Reason)
	return UnparsedView{ID: u.ID.String(), JSON: append(b, '}')}
}

func appendNullString(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return jsonx.AppendString(b, s)
}

// Unparsed returns a workspace's unreadable e-mails, newest first.
func (e *Engine) Unparsed(wsID string) ([]UnparsedView, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return nil, err
	}
	views, ok := askOK(a, func(w *workspace) []UnparsedView {
		out := make([]UnparsedView, 0, len(w.Unparsed))
		for i := len(w.Unparsed) - 1; i >= 0; i-- {
			out = append(out, w.unparsedView(w.Unparsed[i]))
		}
		return out
	})
	if !ok {
		return nil, ErrClosed
	}
	return views, nil
}

// UnparsedRef is what a re-read needs of an unparsed e-mail: its raw
// message and the parser its job uses now.
type UnparsedRef struct {
	ID, JobID string
	Vendor    string // the job's vendor now (it may have been corrected)
	RawRef    string
	Rules     *MailRules // the workspace's parsing rules now
}

// unparsedRef returns u's reference.
func (w *workspace) unparsedRef(u *state.UnparsedMail) UnparsedRef {
	r := UnparsedRef{ID: u.ID.String(), JobID: u.JobID.String(), Vendor: u.Vendor, RawRef: u.RawRef, Rules: w.mailRules()}
	if j := w.Jobs[u.JobID]; j != nil {
		r.Vendor = j.Vendor
	}
	return r
}

// UnparsedMail returns one unparsed e-mail's reference; a KindNotFound
// error when the workspace or the entry does not exist.
func (e *Engine) UnparsedMail(wsID, id string) (UnparsedRef, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return UnparsedRef{}, err
	}
	ref, ok := askOK(a, func(w *workspace) *UnparsedRef {
		u := w.UnparsedByID(id)
		if u == nil {
			return nil
		}
		r := w.unparsedRef(u)
		return &r
	})
	if !ok {
		return UnparsedRef{}, ErrClosed
	}
	if ref == nil {
		return UnparsedRef{}, notFound("unparsed e-mail")
	}
	return *ref, nil
}

// adminJobView is the admin API's job: the REST job object plus its
// ingest address, which only the admin API shows.
func (e *Engine) adminJobView(w *workspace, j *state.Job, now int64) JobView {
	b := w.AppendJob(nil, j, now)
	return JobView{ID: j.ID.String(), JSON: e.withIngestAddress(b, j)}
}

// withIngestAddress adds "ingestAddress" to the job object that ends b.
func (e *Engine) withIngestAddress(b []byte, j *state.Job) []byte {
	b = append(b[:len(b)-1], `,"ingestAddress":`...)
	b = appendNullString(b, e.ingestAddress(j))
	return append(b, '}')
}

// UserView is a user record: never a password or its hash.
type UserView struct {
	ID        string     `json:"id"`
	Email     string     `json:"email"`
	Name      string     `json:"name"`
	Role      string     `json:"role"`
	CreatedAt state.Time `json:"createdAt"`
	// TwoFactor is whether the user signs in with a second factor: for
	// the dashboard's users page, never in the admin API's answers.
	TwoFactor bool `json:"-"`
}

func userView(u *state.User) UserView {
	return UserView{ID: u.ID.String(), Email: u.Email, Name: u.Name, Role: u.Role, CreatedAt: state.Time(u.CreatedAt), TwoFactor: u.TwoFactor != nil}
}

// Users returns the workspace's users by e-mail address.
func (e *Engine) Users(wsID string) ([]UserView, error) {
	return read(e, wsID, func(w *workspace) []UserView {
		views := make([]UserView, 0, len(w.Users))
		for _, u := range w.Users {
			views = append(views, userView(u))
		}
		sort.Slice(views, func(i, j int) bool { return views[i].Email < views[j].Email })
		return views
	})
}

// User returns one user of a workspace, or a KindNotFound error.
func (e *Engine) User(wsID, userID string) (UserView, error) {
	a, err := e.workspaceActor(wsID)
	if err != nil {
		return UserView{}, err
	}
	v, ok := ask2(a, func(w *workspace) (UserView, bool) {
		u := w.User(userID)
		if u == nil {
			return UserView{}, false
		}
		return userView(u), true
	})
	if !ok {
		return UserView{}, notFound("user")
	}
	return v, nil
}

// ChannelView is a channel record (decisions.md 7); Secret is set only in
// the answer to its creation (webhook channels).
type ChannelView struct {
	ID          string     `json:"id"`
	Type        string     `json:"type"`
	Name        string     `json:"name"`
	URL         *string    `json:"url"`
	To          *string    `json:"to"`
	MinSeverity string     `json:"minSeverity"`
	CreatedAt   state.Time `json:"createdAt"`
	Secret      string     `json:"secret,omitempty"`
	// Settings and SecretsSet: the channel types of cmd_psa.go (the
	// names of the secrets set, never their values).
	Settings   map[string]string `json:"settings,omitempty"`
	SecretsSet []string          `json:"secretsSet,omitempty"`
}

// EscalationView is an escalation rule record.
type EscalationView struct {
	ID           string     `json:"id"`
	ChannelID    string     `json:"channelId"`
	AfterMinutes int64      `json:"afterMinutes"`
	CreatedAt    state.Time `json:"createdAt"`
}

// DeliveryView is a notification delivery with its state: pending,
// delivered, failed (given up after 24 hours) or cancelled.
type DeliveryView struct {
	ID            string         `json:"id"`
	ChannelID     string         `json:"channelId"`
	Event         string         `json:"event"`
	AlertID       string         `json:"alertId"` // "": a notice without an alert (a size drop)
	JobID         string         `json:"jobId"`
	State         string         `json:"state"`
	Attempts      int            `json:"attempts"`
	CreatedAt     state.Time     `json:"createdAt"`
	LastAttemptAt state.NullTime `json:"lastAttemptAt"`
	NextAttemptAt state.NullTime `json:"nextAttemptAt"`
	DeliveredAt   state.NullTime `json:"deliveredAt"`
	LastError     *string        `json:"lastError"`
}

func channelView(c *state.Channel) ChannelView {
	v := ChannelView{ID: c.ID.String(), Type: c.Type, Name: c.Name, MinSeverity: state.SeverityName(c.MinSeverity), CreatedAt: state.Time(c.CreatedAt)}
	if c.URL != "" {
		u := c.URL
		v.URL = &u
	}
	if c.To != "" {
		t := c.To
		v.To = &t
	}
	if _, ok := channelSpecs[c.Type]; ok {
		v.Settings = make(map[string]string, len(c.Settings))
		for _, s := range c.Settings {
			v.Settings[s.Key] = s.Value
		}
		for _, s := range c.Secrets {
			v.SecretsSet = append(v.SecretsSet, s.Key)
		}
	}
	return v
}

func deliveryView(d *state.Delivery) DeliveryView {
	v := DeliveryView{
		ID: d.ID.String(), ChannelID: d.ChannelID.String(), Event: d.Event, JobID: d.JobID.String(),
		Attempts: d.Attempts, CreatedAt: state.Time(d.CreatedAt), LastAttemptAt: state.NullTime(d.LastAttemptAt), DeliveredAt: state.NullTime(d.DeliveredAt),
	}
	if !d.AlertID.IsZero() {
		v.AlertID = d.AlertID.String()
	}
	switch d.State {
	case state.DeliveryPending:
		v.State = "pending"
		if !d.InFlight {
			v.NextAttemptAt = state.NullTime(d.NextAt)
		}
	case state.DeliveryDelivered:
		v.State = "delivered"
	case state.DeliveryFailed:
		v.State = "failed"
	case state.DeliveryCancelled:
		v.State = "cancelled"
	}
	if d.LastError != "" {
		e := d.LastError
		v.LastError = &e
	}
	return v
}

// Channels returns the workspace's channels, oldest first, without secrets.
func (e *Engine) Channels(wsID string) ([]ChannelView, error) {
	return read(e, wsID, func(w *workspace) []ChannelView { return viewsOf(w.Channels, channelView) })
}

func escalationView(r *state.Escalation) EscalationView {
	return EscalationView{ID: r.ID.String(), ChannelID: r.ChannelID.String(), AfterMinutes: r.AfterMinutes, CreatedAt: state.Time(r.CreatedAt)}
}

// Escalations returns the workspace's escalation rules by afterMinutes.
func (e *Engine) Escalations(wsID string) ([]EscalationView, error) {
	return read(e, wsID, func(w *workspace) []EscalationView { return viewsOf(w.Escalations, escalationView) })
}

// Deliveries returns the workspace's notification deliveries, newest first.
func (e *Engine) Deliveries(wsID string) ([]DeliveryView, error) {
	return read(e, wsID, func(w *workspace) []DeliveryView {
		list := make([]DeliveryView, 0, len(w.Deliveries))
		for i := len(w.Deliveries) - 1; i >= 0; i-- {
			list = append(list, deliveryView(w.Deliveries[i]))
		}
		return list
	})
}
