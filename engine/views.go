package engine

import (
	"strconv"
	"strings"
	"time"

	"backupmon/jsonx"
)

// Views are copies of state built inside an actor and handed to callers;
// they never point into the workspace. Their JSON is the contract's shape.

// Time is a point in time in Unix milliseconds, shown as
// YYYY-MM-DDTHH:MM:SS.mmmZ.
type Time int64

// MarshalJSON writes the time in the contract's format.
// Millis returns the time as Unix milliseconds.
func (t Time) Millis() int64 { return int64(t) }

// MarshalJSON writes the time as a timestamp.
func (t Time) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 26)
	return AppendTime(b, int64(t)), nil
}

// NullTime is a Time that is null when zero.
type NullTime int64

// MarshalJSON writes null for zero, else the time.
func (t NullTime) MarshalJSON() ([]byte, error) {
	if t == 0 {
		return []byte("null"), nil
	}
	return Time(t).MarshalJSON()
}

// AppendTime appends ms as a quoted contract timestamp.
func AppendTime(b []byte, ms int64) []byte {
	b = append(b, '"')
	b = msTime(ms).AppendFormat(b, "2006-01-02T15:04:05.000Z")
	return append(b, '"')
}

// FormatTime returns ms as a contract timestamp (unquoted).
func FormatTime(ms int64) string { return msTime(ms).Format("2006-01-02T15:04:05.000Z") }

// MarshalJSON writes null for a rate with nothing to rate, else the
// percentage with one decimal.
func (r Rate) MarshalJSON() ([]byte, error) {
	if !r.Valid {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, r.Float(), 'f', 1, 64), nil
}

// Percent is a percentage shown with at least one decimal (95.0, 99.95).
type Percent float64

// MarshalJSON writes the percentage with at least one decimal.
func (p Percent) MarshalJSON() ([]byte, error) {
	b := strconv.AppendFloat(nil, float64(p), 'f', -1, 64)
	for _, c := range b {
		if c == '.' || c == 'e' {
			return b, nil
		}
	}
	return append(b, '.', '0'), nil
}

// The admin API's views are the REST objects' JSON (encode.go), with the
// id beside it for callers that go on to use it.

// WorkspaceView is a workspace record (decisions.md 4.1).
type WorkspaceView struct {
	ID   string
	JSON []byte
}

// MarshalJSON returns the record's JSON.
func (v WorkspaceView) MarshalJSON() ([]byte, error) { return v.JSON, nil }

// ClientView is a client object (decisions.md 4.2).
type ClientView struct {
	ID   string
	JSON []byte
}

// MarshalJSON returns the object's JSON.
func (v ClientView) MarshalJSON() ([]byte, error) { return v.JSON, nil }

// JobView is a job object (api.md 2.5); for the admin job view, with its
// recent results, unresolved alerts and history.
type JobView struct {
	ID   string
	JSON []byte
}

// MarshalJSON returns the object's JSON.
func (v JobView) MarshalJSON() ([]byte, error) { return v.JSON, nil }

// AlertView is an alert object (api.md 2.7).
type AlertView struct {
	ID   string
	JSON []byte
}

// MarshalJSON returns the object's JSON.
func (v AlertView) MarshalJSON() ([]byte, error) { return v.JSON, nil }

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
	return WorkspaceView{ID: w.id.String(), JSON: w.appendWorkspaceRecord(nil)}
}

func (w *workspace) clientView(c *client, now int64) ClientView {
	return ClientView{ID: c.id.String(), JSON: w.appendClient(nil, c, now)}
}

func alertView(a *alert, now int64) AlertView {
	return AlertView{ID: a.id.String(), JSON: appendAlert(nil, a, now)}
}

func keyView(k *apiKey) KeyView {
	return KeyView{ID: k.id.String(), JSON: appendKeyRecord(nil, k)}
}

func daysList(days uint8) []string {
	list := make([]string, 0, 7)
	// Monday first, as people read a week.
	for _, d := range []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday} {
		if days&(1<<uint(d)) != 0 {
			list = append(list, weekdayNames[d])
		}
	}
	return list
}

func scopeList(bits uint8) []string {
	list := make([]string, 0, len(scopeNames))
	for _, s := range scopeNames {
		if bits&s.bit != 0 {
			list = append(list, s.name)
		}
	}
	return list
}

// ActivityView is an activity log entry.
type ActivityView struct {
	ID      string `json:"id"`
	At      Time   `json:"at"`
	Type    string `json:"type"`
	Actor   string `json:"actor"`
	KeyID   string `json:"keyId,omitempty"`
	KeyName string `json:"keyName,omitempty"`
	AlertID string `json:"alertId,omitempty"`
	JobID   string `json:"jobId,omitempty"`
	JobName string `json:"jobName,omitempty"`
	// ClientID, ChannelID and EscalationID name what a client.*,
	// channel.* or escalation.* entry is about; Name is its name then.
	ClientID     string `json:"clientId,omitempty"`
	ChannelID    string `json:"channelId,omitempty"`
	EscalationID string `json:"escalationId,omitempty"`
	Name         string `json:"name,omitempty"`
	Note         string `json:"note,omitempty"`
}

func activityView(a *activity) ActivityView {
	v := ActivityView{ID: a.id.String(), At: Time(a.at), Type: a.typ, Actor: a.actor, KeyName: a.keyName, Note: a.note}
	if !a.keyID.IsZero() {
		v.KeyID = a.keyID.String()
	}
	if !a.alertID.IsZero() {
		v.AlertID = a.alertID.String()
	}
	if !a.jobID.IsZero() {
		v.JobID = a.jobID.String()
		v.JobName = a.subjectName
	}
	if !a.subjectID.IsZero() {
		switch {
		case strings.HasPrefix(a.typ, "client."):
			v.ClientID = a.subjectID.String()
		case strings.HasPrefix(a.typ, "channel."):
			v.ChannelID = a.subjectID.String()
		case strings.HasPrefix(a.typ, "escalation."):
			v.EscalationID = a.subjectID.String()
		}
		v.Name = a.subjectName
	}
	return v
}
