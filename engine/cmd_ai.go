package engine

import (
	"cmp"
	"strings"
	"unicode/utf8"

	"backupmon/state"
)

// Suggestions from a model (decisions.md): a failed, warning or integrity
// alert opened or raised by a report e-mail with the product's error text
// is queued (an AIQueued record, in the same actor step as the report, so
// the report's answer never waits on the model); the actor hands due
// questions to the AIAsker within the daily cap, and each outcome comes
// back as a message and is logged (AIAnswered): a valid suggestion
// replaces the alert's ai, a failure is retried with backoff, an invalid
// answer is dropped. The queue is in the log and the snapshots, so a
// restart or an endpoint down for a day loses nothing.

// AIRequest is one question for the model.
type AIRequest struct {
	Workspace, AlertID string
	Attempt            int64  // echo it in the AIResult
	Prompt             string // the workspace's system prompt; "" the default
	JobName, Vendor    string
	AlertType          string // failed, warning or integrity
	Text               string // the product's error text (untrusted)
}

// AIResult is the outcome of one AIRequest: Suggestion when Err is nil;
// Dropped when the answer was no valid suggestion (not retried), else Err
// is a failure worth retrying.
type AIResult struct {
	Workspace, AlertID string
	Attempt            int64
	Suggestion         Suggestion
	Err                error
	Dropped            bool
}

// AIAsker asks the model. Ask must not block: it queues the request, and
// the result comes back through Engine.AIDone from another goroutine.
type AIAsker interface {
	Ask(req AIRequest)
}

// AILimits bound the questions: calls per workspace in a trailing day,
// attempts per alert, and how long an alert's question is kept.
type AILimits struct {
	CallsPerDay int
	MaxAttempts int64
	MaxAgeMs    int64
}

type aiBox struct {
	asker AIAsker
	lim   AILimits
}

// Defaults of AILimits.
const (
	DefaultAICallsPerDay = 200
	defaultAIAttempts    = 30
	defaultAIMaxAgeMs    = 3 * state.MsPerDay
	// MaxAIPrompt bounds a workspace's prompt, in characters.
	MaxAIPrompt = 4000
)

// aiBackoff is the wait after the n-th failed attempt (the last one
// repeats): an endpoint down for a day is tried about a dozen times.
var aiBackoff = []int64{state.MsPerMinute, 5 * state.MsPerMinute, 15 * state.MsPerMinute, 60 * state.MsPerMinute, 3 * 60 * state.MsPerMinute}

// SetAI sets the model's asker and limits (off until called), and asks the
// questions queued before (after recovery, those due now).
func (e *Engine) SetAI(asker AIAsker, lim AILimits) {
	lim.CallsPerDay = cmp.Or(max(lim.CallsPerDay, 0), DefaultAICallsPerDay)
	lim.MaxAttempts = cmp.Or(max(lim.MaxAttempts, 0), defaultAIAttempts)
	lim.MaxAgeMs = cmp.Or(max(lim.MaxAgeMs, 0), defaultAIMaxAgeMs)
	e.ai.Store(&aiBox{asker: asker, lim: lim})
	for _, a := range e.sortedActors() {
		a.send(func(w *workspace) { a.dispatchAI(e.nowMs()) })
	}
}

func (e *Engine) aiAsker() *aiBox { return e.ai.Load() }

// queueAI returns the record that queues a question for a mail's report
// record, nil when none is asked: no asker, no alert opened or raised, or
// no error text.
func (a *actor) queueAI(w *workspace, j *state.Job, rec *state.Report, in *MailInput, now int64) *state.AIQueued {
	if a.eng.aiAsker() == nil || state.ID(rec.AlertID).IsZero() || in.Summary == "" {
		return nil
	}
	typ := rec.AlertType
	if typ == 0 {
		switch in.Status {
		case ReportFailed:
			typ = state.AlertFailed
		case ReportWarn:
			typ = state.AlertWarning
		default:
			return nil
		}
	}
	return &state.AIQueued{AIItem: state.AIItem{
		AlertID: rec.AlertID, JobID: j.ID, AlertType: typ, Vendor: j.Vendor, JobName: j.Name,
		Text: in.Summary, QueuedAt: now, NextAt: now,
	}}
}

// dispatchAI hands the due questions to the asker, within the daily cap
// (calls in the trailing day and those in flight); a question over the cap
// waits until the oldest call leaves the day, one too old is dropped.
func (a *actor) dispatchAI(now int64) {
	box := a.eng.aiAsker()
	if box == nil || a.eng.readOnly != nil {
		return
	}
	w := a.ws
	for _, it := range append([]*state.AIItem(nil), w.AIQueue...) {
		if it.InFlight() || it.NextAt > now {
			continue
		}
		if now-it.QueuedAt > box.lim.MaxAgeMs {
			a.eng.logger.Warn("model suggestion given up: too old", "workspace", w.ID, "alert", it.AlertID, "attempts", it.Attempts)
			a.commit(&state.AIAnswered{AlertID: it.AlertID, Outcome: state.AIDropped, At: now})
			continue
		}
		calls := w.AICallsSince(now - state.MsPerDay)
		busy := 0
		for _, x := range w.AIQueue {
			if x.InFlight() {
				busy++
			}
		}
		if len(calls)+busy >= box.lim.CallsPerDay {
			next := now + state.MsPerMinute
			if len(calls) > 0 && len(calls) >= box.lim.CallsPerDay {
				next = max(next, calls[len(calls)-box.lim.CallsPerDay]+state.MsPerDay+1)
			}
			if it.NextAt < next {
				a.commit(&state.AIAnswered{AlertID: it.AlertID, Outcome: state.AIDeferred, At: now, NextAt: next})
			}
			continue
		}
		it.SetInFlight(true)
		box.asker.Ask(AIRequest{
			Workspace: w.ID.String(), AlertID: it.AlertID.String(), Attempt: it.Attempts, Prompt: w.AIPrompt,
			JobName: it.JobName, Vendor: state.VendorName(it.Vendor), AlertType: state.AlertTypeName(it.AlertType), Text: it.Text,
		})
	}
}

// AIDone takes the outcome of a question (from the asker's goroutines) and
// records it; an outcome for a question no longer waiting for it is
// ignored.
func (e *Engine) AIDone(res AIResult) {
	a, err := e.workspaceActor(res.Workspace)
	if err != nil {
		return
	}
	a.send(func(w *workspace) {
		id, ok := state.ParseID(res.AlertID)
		it := w.AIItemFor(id)
		if !ok || it == nil || !it.InFlight() || it.Attempts != res.Attempt {
			return
		}
		it.SetInFlight(false)
		now := e.nowMs()
		box := e.aiAsker()
		rec := &state.AIAnswered{AlertID: it.AlertID, Called: true, At: now}
		switch {
		case res.Err == nil && w.Alerts[it.AlertID] != nil:
			rec.Outcome = state.AISuggested
			rec.Cause, rec.Confidence, rec.Category = res.Suggestion.Cause, res.Suggestion.Confidence, res.Suggestion.Category
		case res.Err == nil:
			rec.Outcome = state.AIDropped
		case res.Dropped:
			e.logger.Warn("model answer dropped", "workspace", w.ID, "alert", it.AlertID, "err", res.Err)
			rec.Outcome = state.AIDropped
		case box != nil && it.Attempts+1 >= box.lim.MaxAttempts:
			e.logger.Warn("model suggestion given up", "workspace", w.ID, "alert", it.AlertID, "attempts", it.Attempts+1, "err", res.Err)
			rec.Outcome = state.AIDropped
		default:
			e.logger.Info("model request failed; retrying", "workspace", w.ID, "alert", it.AlertID, "attempt", it.Attempts+1, "err", res.Err)
			rec.Outcome = state.AIRetry
			rec.NextAt = now + aiBackoff[min(int(it.Attempts), len(aiBackoff)-1)]
		}
		a.commit(rec)
	})
}

// AIPrompt returns the workspace's prompt for the model ("" : the default).
func (e *Engine) AIPrompt(wsID string) (string, error) {
	return read(e, wsID, func(w *workspace) string { return w.AIPrompt })
}

// SetAIPrompt sets the workspace's prompt ("" : back to the default);
// KindInvalid past MaxAIPrompt characters or for control characters other
// than line breaks and tabs.
func (e *Engine) SetAIPrompt(wsID, prompt string) error {
	prompt = strings.TrimSpace(prompt)
	if utf8.RuneCountInString(prompt) > MaxAIPrompt || !utf8.ValidString(prompt) || strings.ContainsFunc(prompt, func(r rune) bool {
		return r < 0x20 && r != '\n' && r != '\t' && r != '\r'
	}) {
		return invalid("prompt", "prompt must be at most %d characters of text", MaxAIPrompt)
	}
	_, err := command(e, wsID, func(w *workspace, now int64) (decision[struct{}], error) {
		return decision[struct{}]{rec: &state.AIPromptSet{Prompt: prompt, At: now}}, nil
	})
	return err
}

// askAI queues a question for a mail's report record (queueAI) and logs
// the record after the report's; the report's answer does not wait for it.
// A question that was not logged (the log failed) is simply not asked.
func (a *actor) askAI(w *workspace, j *state.Job, rec *state.Report, in *MailInput, now int64) {
	q := a.queueAI(w, j, rec, in, now)
	if q == nil {
		return
	}
	if err := a.applyNew(q); err != nil {
		a.eng.logger.Error("apply model question", "workspace", w.ID, "err", err)
		return
	}
	a.eng.submit(q, func(uint64, error) {})
}
