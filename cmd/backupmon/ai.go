package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"backupmon/aiclient"
	"backupmon/engine"
)

// aiConfig holds the flags of the model's suggestions (decisions.md,
// suggestions from a model): off unless --ai-endpoint is given.
type aiConfig struct {
	endpoint, model, keyFile string
	concurrency, callsPerDay int
	timeout                  time.Duration
	key                      string // read from keyFile
}

// addAIFlags declares the --ai-* flags on fs.
func addAIFlags(fs *flag.FlagSet, c *aiConfig) {
	fs.StringVar(&c.endpoint, "ai-endpoint", envDefault("ai-endpoint", ""), "OpenAI-compatible chat-completions URL for failure suggestions, e.g. http://127.0.0.1:11434/v1/chat/completions (default: off)")
	fs.StringVar(&c.model, "ai-model", envDefault("ai-model", ""), "model name sent to --ai-endpoint (required with it)")
	fs.StringVar(&c.keyFile, "ai-key-file", envDefault("ai-key-file", ""), "file holding the bearer key of --ai-endpoint (default: none sent)")
	c.concurrency, c.callsPerDay, c.timeout = 2, engine.DefaultAICallsPerDay, 30*time.Second
	fs.Func("ai-concurrency", "questions to the model at once (default 2)", intFlag(&c.concurrency, 1, 64))
	fs.Func("ai-calls-per-day", "calls to the model per workspace in a trailing 24 hours (default 200)", intFlag(&c.callsPerDay, 1, 1_000_000))
	fs.Func("ai-timeout", "time for one answer of the model, e.g. 30s (default 30s)", func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 100*time.Millisecond || d > 10*time.Minute {
			return errors.New("a duration from 100ms to 10m")
		}
		c.timeout = d
		return nil
	})
}

func intFlag(p *int, lo, hi int) func(string) error {
	return func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("an integer from %d to %d", lo, hi)
		}
		*p = n
		return nil
	}
}

// check validates the flags and reads the key file.
func (c *aiConfig) check() error {
	if c.endpoint == "" {
		if c.model != "" || c.keyFile != "" {
			return errors.New("--ai-model and --ai-key-file need --ai-endpoint")
		}
		return nil
	}
	u, err := url.Parse(c.endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--ai-endpoint must be an http(s) URL, not %q", c.endpoint)
	}
	if c.model == "" {
		return errors.New("--ai-endpoint needs --ai-model")
	}
	if c.keyFile != "" {
		b, err := os.ReadFile(c.keyFile)
		if err != nil {
			return fmt.Errorf("--ai-key-file: %w", err)
		}
		c.key = strings.TrimSpace(string(b))
	}
	return nil
}

// aiAsker runs the model's questions on a few workers: the engine's
// AIAsker. A question that finds the queue full fails at once (the engine
// retries it later).
type aiAsker struct {
	c      *aiclient.Client
	eng    *engine.Engine
	q      chan engine.AIRequest
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	log    *slog.Logger
}

// startAI sets the engine's asker when --ai-endpoint is given; nil when not.
func startAI(c aiConfig, eng *engine.Engine, log *slog.Logger) *aiAsker {
	if c.endpoint == "" {
		return nil
	}
	a := &aiAsker{
		c:   aiclient.New(aiclient.Config{Endpoint: c.endpoint, Model: c.model, Key: c.key, Timeout: c.timeout}),
		eng: eng, q: make(chan engine.AIRequest, 256), log: log,
	}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	for range c.concurrency {
		a.wg.Add(1)
		go a.work()
	}
	eng.SetAI(a, engine.AILimits{CallsPerDay: c.callsPerDay})
	log.Info("model suggestions on", "endpoint", c.endpoint, "model", c.model, "concurrency", c.concurrency, "calls_per_day", c.callsPerDay)
	return a
}

// Ask queues req (never blocks).
func (a *aiAsker) Ask(req engine.AIRequest) {
	select {
	case a.q <- req:
	default:
		go a.eng.AIDone(engine.AIResult{Workspace: req.Workspace, AlertID: req.AlertID, Attempt: req.Attempt, Err: errors.New("the model's queue is full")})
	}
}

func (a *aiAsker) work() {
	defer a.wg.Done()
	for {
		select {
		case <-a.ctx.Done():
			return
		case req := <-a.q:
			s, err := a.c.Ask(a.ctx, req.Prompt, aiclient.Facts{JobName: req.JobName, Product: req.Vendor, AlertType: req.AlertType, ErrorText: req.Text})
			if a.ctx.Err() != nil {
				return // shutting down: asked again after the restart
			}
			a.eng.AIDone(engine.AIResult{
				Workspace: req.Workspace, AlertID: req.AlertID, Attempt: req.Attempt, Err: err,
				Dropped:    errors.Is(err, aiclient.ErrDropped),
				Suggestion: engine.Suggestion{Cause: s.LikelyCause, Confidence: s.Confidence, Category: s.Category},
			})
		}
	}
}

// close stops the workers; questions in flight are asked again after the
// restart.
func (a *aiAsker) close() {
	if a == nil {
		return
	}
	a.cancel()
	a.wg.Wait()
}
