package mailparse

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sampleDir holds the sample e-mails copied from the team's shared test
// data: one folder per vendor, each NN-name.eml beside its expected parse.
// variantDir holds more of them, written from the products' documentation
// (localized dates, several machines, retries, long errors), same layout.
const (
	sampleDir  = "../testdata/emails"
	variantDir = "../testdata/variants"
)

type expected struct {
	Vendor          string  `json:"vendor"`
	JobName         string  `json:"jobName"`
	Status          string  `json:"status"`
	StartedAt       *string `json:"startedAt"`
	CompletedAt     *string `json:"completedAt"`
	DurationSeconds *int64  `json:"durationSeconds"`
	SizeBytes       *int64  `json:"sizeBytes"`
	Summary         *string `json:"summary"`
	IntegrityFailed bool    `json:"integrityFailed"`
}

// TestSamples parses every sample e-mail with its folder's parser and
// compares every field with the expected parse beside it.
func TestSamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(sampleDir, "*", "*.eml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples under %s: %v", sampleDir, err)
	}
	more, _ := filepath.Glob(filepath.Join(variantDir, "*", "*.eml"))
	files = append(files, more...)
	vendors := map[string]bool{}
	for _, f := range files {
		vendor := filepath.Base(filepath.Dir(f))
		vendors[vendor] = true
		t.Run(filepath.Base(filepath.Dir(filepath.Dir(f)))+"/"+vendor+"/"+strings.TrimSuffix(filepath.Base(f), ".eml"), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			js, err := os.ReadFile(strings.TrimSuffix(f, ".eml") + ".json")
			if err != nil {
				t.Fatal(err)
			}
			var want expected
			if err := json.Unmarshal(js, &want); err != nil {
				t.Fatal(err)
			}
			if want.Vendor != vendor {
				t.Fatalf("sample says vendor %q in folder %q", want.Vendor, vendor)
			}
			got, _, err := Parse(vendor, raw)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			checkResult(t, got, want)
		})
	}
	for _, v := range []string{"veeam", "acronis", "datto", "cove", "synology", "nakivo", "backupexec", "msp360", "altaro", "macrium", "generic"} {
		if !vendors[v] {
			t.Errorf("no samples for vendor %s", v)
		}
		if parsers[v] == nil {
			t.Errorf("no parser for vendor %s", v)
		}
	}
}

// checkResult compares a parse with an expected one, field by field.
func checkResult(t *testing.T, got Result, want expected) {
	t.Helper()
	if got.JobName != want.JobName {
		t.Errorf("jobName = %q, want %q", got.JobName, want.JobName)
	}
	if got.Status.String() != want.Status {
		t.Errorf("status = %s, want %s", got.Status, want.Status)
	}
	checkTime(t, "startedAt", got.StartedAt, want.StartedAt)
	checkTime(t, "completedAt", got.CompletedAt, want.CompletedAt)
	if want.DurationSeconds == nil {
		if got.DurationSeconds != -1 {
			t.Errorf("durationSeconds = %d, want none", got.DurationSeconds)
		}
	} else if got.DurationSeconds != *want.DurationSeconds {
		t.Errorf("durationSeconds = %d, want %d", got.DurationSeconds, *want.DurationSeconds)
	}
	switch {
	case want.SizeBytes == nil:
		if got.SizeBytes != -1 {
			t.Errorf("sizeBytes = %d, want none", got.SizeBytes)
		}
	case *want.SizeBytes == 0:
		if got.SizeBytes != 0 {
			t.Errorf("sizeBytes = %d, want 0", got.SizeBytes)
		}
	default:
		// Products print "GB" without saying 1000 or 1024: the expected
		// value is the midpoint of the two readings, so either is within 6%.
		w := float64(*want.SizeBytes)
		if got.SizeBytes < 0 || math.Abs(float64(got.SizeBytes)-w) > 0.06*w {
			t.Errorf("sizeBytes = %d, want %d within 6%%", got.SizeBytes, *want.SizeBytes)
		}
	}
	wantSummary := ""
	if want.Summary != nil {
		wantSummary = *want.Summary
	}
	if got.Summary != wantSummary {
		t.Errorf("summary = %q\n want %q", got.Summary, wantSummary)
	}
	if got.IntegrityFailed != want.IntegrityFailed {
		t.Errorf("integrityFailed = %v, want %v", got.IntegrityFailed, want.IntegrityFailed)
	}
}

func checkTime(t *testing.T, name string, got time.Time, want *string) {
	t.Helper()
	if want == nil {
		if !got.IsZero() {
			t.Errorf("%s = %s, want none", name, got.UTC().Format(time.RFC3339))
		}
		return
	}
	w, err := time.Parse(time.RFC3339, *want)
	if err != nil {
		t.Fatalf("expected %s %q: %v", name, *want, err)
	}
	if !got.Equal(w) {
		t.Errorf("%s = %s, want %s", name, got.UTC().Format(time.RFC3339), *want)
	}
}
