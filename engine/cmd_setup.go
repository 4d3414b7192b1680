package engine

import (
	"backupmon/state"
)

// Commands of the dashboard's set-up pages that the admin API has no
// equivalent of: a job's size-drop threshold (docs/decisions.md "Size
// drops").

// CheckSizeDropPercent checks a job's size-drop threshold as sent: unset
// or null means the default, else an integer from 0 (off) to 100. It
// returns a KindInvalid error naming sizeDropPercent otherwise.
func CheckSizeDropPercent(v Opt[int64]) error {
	if v.Set && !v.Null && (v.V < 0 || v.V > 100) {
		return invalid("sizeDropPercent", "sizeDropPercent must be an integer from 0 to 100")
	}
	return nil
}

// SetSizeDrop sets a job's size-drop threshold: a successful run under
// percent of the median of its last runs is flagged (0: never); unset or
// null returns the job to the default. Nothing is logged when the setting
// is already so. It returns a KindInvalid error for a percentage outside
// 0..100 and a KindNotFound one for an unknown workspace or job.
func (e *Engine) SetSizeDrop(wsID, jobID string, percent Opt[int64], actor string) error {
	if err := CheckSizeDropPercent(percent); err != nil {
		return err
	}
	_, err := command(e, wsID, func(w *workspace, now int64) (decision[struct{}], error) {
		j := w.Job(jobID)
		if j == nil {
			return decision[struct{}]{}, notFound("job")
		}
		rec := &state.SizeDropSet{JobID: j.ID, Default: !percent.Set || percent.Null, At: now, Actor: actor}
		if !rec.Default {
			rec.Percent = uint8(percent.V)
		}
		if (state.SizeDropSetting{Set: !rec.Default, Percent: rec.Percent}) == j.SizeDrop {
			return decision[struct{}]{}, nil
		}
		rec.ActivityID = w.IDs.Next(now)
		return decision[struct{}]{rec: rec}, nil
	})
	return err
}

// byActor returns the record of a change to a client or job made by actor:
// rec itself for the admin API (""), else its variant that names the
// person (state/rec_setup.go).
func byActor(rec state.Record, actor string) state.Record {
	if actor == "" {
		return rec
	}
	switch r := rec.(type) {
	case *state.ClientCreated:
		return &state.ClientCreatedBy{By: state.MadeBy(r, actor)}
	case *state.ClientUpdated:
		return &state.ClientUpdatedBy{By: state.MadeBy(r, actor)}
	case *state.JobCreated:
		return &state.JobCreatedBy{By: state.MadeBy(r, actor)}
	case *state.JobDeleted:
		return &state.JobDeletedBy{By: state.MadeBy(r, actor)}
	}
	return rec
}
