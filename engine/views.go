package engine

import (
	"strings"

	"backupmon/jsonx"
	"backupmon/state"
)

// Views are copies of state built inside an actor and handed to callers;
// they never point into the workspace. Their JSON is the contract's shape.

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
	// ClientID, ChannelID and EscalationID name what a client.*,
	// channel.* or escalation.* entry is about; Name is its name then.
	ClientID     string `json:"clientId,omitempty"`
	ChannelID    string `json:"channelId,omitempty"`
	EscalationID string `json:"escalationId,omitempty"`
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
		}
		v.Name = a.SubjectName
	}
	return v
}
