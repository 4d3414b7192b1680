package state

import (
	"fmt"
	"slices"

	"backupmon/codec"
)

// Records of the model's suggestions (decisions.md, suggestions from a
// model): an alert queued for a question to the model, the outcome of an
// attempt (a suggestion that replaces the alert's ai, a retry, a deferral
// at the daily cap, or a drop), and the workspace's prompt.

// Record type numbers of this file.
const (
	TypeAIQueued    byte = 53
	TypeAIAnswered  byte = 54
	TypeAIPromptSet byte = 55
)

// Outcomes of AIAnswered.
const (
	AISuggested uint8 = 1 // a valid answer: it replaces the alert's ai
	AIRetry     uint8 = 2 // the request failed: asked again at NextAt
	AIDeferred  uint8 = 3 // the daily cap: asked at NextAt, no call made
	AIDropped   uint8 = 4 // given up: an invalid answer, too many attempts or too old
)

// MaxAIQueue bounds a workspace's queued questions; the oldest leaves
// when a new one would pass it.
const MaxAIQueue = 200

// AIItem is one alert waiting for the model's suggestion.
type AIItem struct {
	AlertID, JobID   ID
	AlertType        uint8
	Vendor, JobName  string
	Text             string // the product's error text
	QueuedAt, NextAt int64
	Attempts         int64
	// inFlight says the question is with the model's client (not saved:
	// asked again after a restart).
	inFlight bool
}

// InFlight reports whether the question is with the model's client.
func (it *AIItem) InFlight() bool { return it.inFlight }

// SetInFlight notes that the question was handed to the model's client
// (true) or came back (false); it is not saved.
func (it *AIItem) SetInFlight(v bool) { it.inFlight = v }

func (it *AIItem) fields(f *codec.Fields) {
	f.Walk(it.AlertID[:], it.JobID[:], &it.AlertType, &it.Vendor, &it.JobName, &it.Text, &it.QueuedAt, &it.NextAt, &it.Attempts)
}

// AIState is a workspace's part of the suggestions: its prompt ("" the
// default), its queue oldest first, and the instants of the calls made in
// the trailing day (the daily cap).
type AIState struct {
	AIPrompt string
	AIQueue  []*AIItem
	AICalls  []int64
}

// AIQueued records an alert queued for the model; an alert already queued
// gets the new text and starts over.
type AIQueued struct {
	Header
	AIItem
}

func (r *AIQueued) apply(w *Workspace) error {
	it := new(AIItem)
	*it = r.AIItem
	if i := w.aiIndex(it.AlertID); i >= 0 {
		w.AIQueue = slices.Delete(w.AIQueue, i, i+1)
	}
	w.AIQueue = append(w.AIQueue, it)
	if over := len(w.AIQueue) - MaxAIQueue; over > 0 {
		w.AIQueue = slices.Delete(w.AIQueue, 0, over)
	}
	w.hooks.Schedule(it.NextAt, TimerAI, nil, nil)
	return nil
}

// AIAnswered records the outcome of one attempt for a queued alert.
// Called says a request reached (or was sent to) the endpoint: it counts
// against the daily cap.
type AIAnswered struct {
	Header
	AlertID                     ID
	Outcome                     uint8
	Cause, Confidence, Category string
	Called                      bool
	At, NextAt                  int64
}

func (r *AIAnswered) fields(f *codec.Fields) {
	f.Walk(r.AlertID[:], &r.Outcome, &r.Cause, &r.Confidence, &r.Category, &r.Called, &r.At, &r.NextAt)
}

func (r *AIAnswered) apply(w *Workspace) error {
	i := w.aiIndex(r.AlertID)
	if i < 0 {
		return fmt.Errorf("answer for alert %s, not queued", r.AlertID)
	}
	it := w.AIQueue[i]
	if r.Called {
		w.AICalls = append(w.AICallsSince(r.At-MsPerDay), r.At)
	}
	switch r.Outcome {
	case AISuggested:
		// Only for the text asked about: a missed due time may have
		// raised the alert with another since.
		if a := w.Alerts[r.AlertID]; a != nil && a.Summary == it.Text {
			a.AI = &aiNote{Cause: r.Cause, Confidence: r.Confidence, Category: r.Category}
		}
		w.AIQueue = slices.Delete(slices.Clone(w.AIQueue), i, i+1)
	case AIRetry, AIDeferred:
		if r.Outcome == AIRetry {
			it.Attempts++
		}
		it.NextAt = r.NextAt
		w.hooks.Schedule(r.NextAt, TimerAI, nil, nil)
	case AIDropped:
		w.AIQueue = slices.Delete(slices.Clone(w.AIQueue), i, i+1)
	default:
		return fmt.Errorf("answer for alert %s: unknown outcome %d", r.AlertID, r.Outcome)
	}
	return nil
}

// AIPromptSet records the workspace's prompt ("" : the default).
type AIPromptSet struct {
	Header
	Prompt string
	At     int64
}

func (r *AIPromptSet) fields(f *codec.Fields) { f.Walk(&r.Prompt, &r.At) }

func (r *AIPromptSet) apply(w *Workspace) error {
	w.AIPrompt = r.Prompt
	return nil
}

// aiIndex returns the place of the alert's queued question, or -1.
func (w *Workspace) aiIndex(alertID ID) int {
	return slices.IndexFunc(w.AIQueue, func(it *AIItem) bool { return it.AlertID == alertID })
}

// AIItemFor returns the alert's queued question, nil when none.
func (w *Workspace) AIItemFor(alertID ID) *AIItem {
	if i := w.aiIndex(alertID); i >= 0 {
		return w.AIQueue[i]
	}
	return nil
}

// AICallsSince returns the calls made after since (a new slice).
func (w *Workspace) AICallsSince(since int64) []int64 {
	i := 0
	for i < len(w.AICalls) && w.AICalls[i] <= since {
		i++
	}
	return slices.Clone(w.AICalls[i:])
}

func (it *AIItem) walk(s *snap, w *Workspace) error {
	it.fields(s.f)
	return nil
}

// walkAI walks the suggestions' state at the end of a snapshot (layout 8).
func (w *Workspace) walkAI(s *snap) error {
	s.f.String(&w.AIPrompt)
	if err := walkList(s, &w.AIQueue, func() *AIItem { return &AIItem{} }, (*AIItem).walk); err != nil {
		return err
	}
	codec.Slice(s.f, &w.AICalls, 1, func(f *codec.Fields, at *int64) { f.Varint(at) })
	return s.f.Err()
}
