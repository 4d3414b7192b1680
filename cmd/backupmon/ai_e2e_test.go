package main

// End-to-end tests of the model's suggestions (decisions.md, suggestions
// from a model) against the real binary and a local fake of the
// chat-completions API: failed report e-mails open alerts, the server asks
// the fake in the background, and the REST API shows what became of ai.

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"backupmon/internal/testserver"
)

// aiFake is a chat-completions endpoint whose answer depends on the job
// the question is about (the "Backup job:" line), or fails while down.
type aiFake struct {
	srv   *httptest.Server
	down  atomic.Bool
	calls map[string]*atomic.Int64 // by job name (the tests' job names; "" any other)
}

var aiJobRe = regexp.MustCompile(`Backup job: (\S+)`)

func newAIFake(t *testing.T) *aiFake {
	f := &aiFake{calls: map[string]*atomic.Int64{}}
	for _, j := range []string{"", "good", "malformed", "injected", "enum", "oversized", "late", "first", "second", "a", "b", "c"} {
		f.calls[j] = new(atomic.Int64)
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Messages []struct{ Role, Content string }
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) != 2 || req.Model != "fake-model" {
			w.WriteHeader(400)
			return
		}
		job := ""
		if m := aiJobRe.FindStringSubmatch(req.Messages[1].Content); m != nil && f.calls[m[1]] != nil {
			job = m[1]
		}
		f.calls[job].Add(1)
		if f.down.Load() {
			w.WriteHeader(503)
			return
		}
		content := `{"likelyCause": "Model: the backup target for ` + job + ` may be out of space.", "confidence": "high", "category": "storage"}`
		switch job {
		case "malformed":
			content = `I think the disk is full. MODEL-PROSE`
		case "injected":
			content = `{"likelyCause": "MODEL-INJECTED", "confidence": "high", "category": "storage", "severity": "critical"}`
		case "enum":
			content = `{"likelyCause": "MODEL-ENUM", "confidence": "certain", "category": "ransomware"}`
		case "oversized":
			content = `{"likelyCause": "MODEL-BIG ` + strings.Repeat("x", 70<<10) + `", "confidence": "low", "category": "storage"}`
		case "late":
			select {
			case <-time.After(1500 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
			content = `{"likelyCause": "MODEL-LATE", "confidence": "low", "category": "storage"}`
		}
		b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": content}}}})
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *aiFake) count(job string) int { return int(f.calls[job].Load()) }

func (f *aiFake) total() int {
	n := 0
	for _, c := range f.calls {
		n += int(c.Load())
	}
	return n
}

// aiStart starts a mail server that asks the fake, with extra flags.
func aiStart(t *testing.T, f *aiFake, extra ...string) (*mlServer, []string) {
	t.Helper()
	flags := append(mlFlags(), "--ai-endpoint", f.srv.URL+"/v1/chat/completions", "--ai-model", "fake-model", "--ai-timeout", "500ms")
	flags = append(flags, extra...)
	s := &mlServer{t: t, c: testserver.StartChild(t, "mail server with a model", t.TempDir(), flags...)}
	s.c.NeedSMTP()
	s.c.SetClock(mlT0)
	s.ws = s.c.NewWorkspace(map[string]any{"name": "AI MSP", "plan": "pro"})
	s.client = s.c.NewClient(s.ws, "Acme")
	s.restKey, _ = s.c.NewKey(s.ws, "rest", map[string]any{"name": "dashboard"})
	return s, flags
}

type aiAlert struct {
	JobName string `json:"jobName"`
	AI      *struct {
		LikelyCause string `json:"likelyCause"`
		Confidence  string `json:"confidence"`
		Category    string `json:"category"`
	} `json:"ai"`
}

// aiAlerts returns the REST API's alerts by job name, and the raw body.
func (s *mlServer) aiAlerts() (map[string]aiAlert, string) {
	s.t.Helper()
	var page struct{ Data []aiAlert }
	body := s.rest("/alerts?limit=100", &page)
	out := map[string]aiAlert{}
	for _, a := range page.Data {
		out[a.JobName] = a
	}
	return out, body
}

// failJob makes a generic weekly job named name (not missing while the
// tests move the clock by a day: a missing alert's text has no suggestion)
// and sends it a failed report.
func (s *mlServer) failJob(name string) {
	s.t.Helper()
	id, addr := s.job(name, "generic")
	s.c.AdminInto(200, "PATCH", s.path("/jobs/"+id), map[string]any{"schedule": map[string]any{"intervalMinutes": 10080}}, nil)
	s.mustSend(addr, mlGeneric(name+"-1", "Failed", mlT0.Add(-time.Minute), "Write failed: no space left on device", "n/a"))
}

// waitAI polls until cond holds of the alerts, or fails.
func (s *mlServer) waitAI(what string, cond func(map[string]aiAlert) bool) map[string]aiAlert {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		al, _ := s.aiAlerts()
		if cond(al) {
			return al
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: alerts %+v", what, al)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func isModel(a aiAlert) bool { return a.AI != nil && strings.HasPrefix(a.AI.LikelyCause, "Model: ") }

func TestAISuggestions(t *testing.T) {
	f := newAIFake(t)
	s, _ := aiStart(t, f)
	jobs := []string{"good", "malformed", "injected", "enum", "oversized", "late"}
	for _, j := range jobs {
		start := time.Now()
		s.failJob(j)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("the report of %s waited %v", j, d)
		}
	}
	al := s.waitAI("the good answer", func(al map[string]aiAlert) bool { return isModel(al["good"]) })
	if a := al["good"].AI; a.LikelyCause != "Model: the backup target for good may be out of space." || a.Confidence != "high" || a.Category != "storage" {
		t.Errorf("good: %+v", a)
	}
	// Every other answer came and was dropped (the late one timed out, and
	// is asked again later): ai stays the catalogue's.
	deadline := time.Now().Add(10 * time.Second)
	for _, j := range jobs[1:] {
		for f.count(j) == 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	time.Sleep(1200 * time.Millisecond) // the late answer's timeout, and its outcome recorded
	al, body := s.aiAlerts()
	for _, j := range jobs[1:] {
		if f.count(j) == 0 {
			t.Errorf("%s was never asked", j)
		}
		if a := al[j].AI; a == nil || isModel(al[j]) || a.Category != "storage" {
			t.Errorf("%s: ai %+v, want the catalogue's", j, a)
		}
	}
	if strings.Contains(body, "MODEL-") || strings.Contains(body, "severity\":\"critical") && strings.Contains(body, "MODEL") {
		t.Errorf("a dropped answer reached the REST API: %s", body)
	}
	// The suggestion is in the log: it survives a restart.
	s.restart()
	if al, _ := s.aiAlerts(); !isModel(al["good"]) {
		t.Errorf("after a restart: %+v", al["good"].AI)
	}
}

// TestAIEndpointDownForADay: with the endpoint down, reports are recorded
// at once; the questions wait in the log through a restart and a day of
// retries, and are answered once the endpoint is back.
func TestAIEndpointDownForADay(t *testing.T) {
	f := newAIFake(t)
	f.down.Store(true)
	s, flags := aiStart(t, f, "--snapshot-every", "5")
	s.failJob("first")
	s.c.AdminInto(201, "POST", s.path("/parsing-rules"), map[string]any{"name": "kept", "match": map[string]any{"from": map[string]any{"contains": "x"}},
		"status": map[string]any{"ok": []string{"ok"}, "failed": []string{"failed"}}}, nil)
	s.c.AdminInto(200, "PUT", s.path("/ai-prompt"), map[string]any{"prompt": "Be brief."}, nil)
	for h := 1; h <= 24; h++ {
		if h == 12 {
			start := time.Now()
			s.failJob("second")
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("a report waited %v while the endpoint was down", d)
			}
			// Killed once a snapshot holds the queue, the rule and the
			// prompt: the restart starts from it.
			deadline := time.Now().Add(10 * time.Second)
			for snaps, _ := filepath.Glob(filepath.Join(s.c.DataDir, "snapshots", "*.snap")); len(snaps) == 0; snaps, _ = filepath.Glob(filepath.Join(s.c.DataDir, "snapshots", "*.snap")) {
				if time.Now().After(deadline) {
					t.Fatal("no snapshot taken")
				}
				time.Sleep(100 * time.Millisecond)
			}
			s.c = s.c.Restart("mail server with a model after SIGKILL", flags...)
			var rules []struct{ Name string }
			s.c.AdminInto(200, "GET", s.path("/parsing-rules"), nil, &rules)
			var prompt struct{ Prompt string }
			s.c.AdminInto(200, "GET", s.path("/ai-prompt"), nil, &prompt)
			if len(rules) != 1 || rules[0].Name != "kept" || prompt.Prompt != "Be brief." {
				t.Fatalf("after the restart: rules %+v, prompt %q", rules, prompt.Prompt)
			}
		}
		s.c.Advance(time.Hour)
	}
	if n := f.count("first"); n < 5 {
		t.Errorf("the first question was tried %d times in a day, want several", n)
	}
	al, _ := s.aiAlerts()
	if len(al) != 2 || isModel(al["first"]) || isModel(al["second"]) || al["first"].AI == nil || al["second"].AI == nil {
		t.Fatalf("while down: %+v", al)
	}
	f.down.Store(false)
	for range 4 {
		s.c.Advance(time.Hour)
	}
	s.waitAI("answers once the endpoint is back", func(al map[string]aiAlert) bool { return isModel(al["first"]) && isModel(al["second"]) })
}

// TestAIDailyCap: a workspace's calls in a trailing day stay within
// --ai-calls-per-day; the questions over it wait for the next day.
func TestAIDailyCap(t *testing.T) {
	f := newAIFake(t)
	s, _ := aiStart(t, f, "--ai-calls-per-day", "2")
	for _, j := range []string{"a", "b", "c"} {
		s.failJob(j)
	}
	s.waitAI("two answers", func(al map[string]aiAlert) bool {
		n := 0
		for _, a := range al {
			if isModel(a) {
				n++
			}
		}
		return n == 2
	})
	s.c.Advance(12 * time.Hour)
	time.Sleep(300 * time.Millisecond)
	if n := f.total(); n != 2 {
		t.Fatalf("%d calls within the day, cap 2", n)
	}
	s.c.Advance(13 * time.Hour)
	s.waitAI("the third answer the next day", func(al map[string]aiAlert) bool {
		return isModel(al["a"]) && isModel(al["b"]) && isModel(al["c"])
	})
	if n := f.total(); n != 3 {
		t.Errorf("%d calls, want 3", n)
	}
}
