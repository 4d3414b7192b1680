package main

import (
	"context"
	"crypto/sha256"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"backupmon/dashboard"
	"backupmon/engine"
	"backupmon/password"
	"backupmon/wal"
)

// The dashboard's figures (issue 6): the attention queue of a large
// workspace rendered whole, and one login's password hash, the cost the
// bound on concurrent hashes is chosen from.

// queueBench is a workspace of 10,000 jobs over 200 clients, 2,000 of
// them failed with an open alert, and a logged-in owner's cookie.
type queueBench struct {
	handler fasthttp.RequestHandler
	cookie  string
	eng     *engine.Engine
}

var (
	queueOnce sync.Once
	queueFix  *queueBench
	queueErr  error
)

func setUpQueue(b *testing.B) *queueBench {
	queueOnce.Do(func() {
		dir, err := os.MkdirTemp("", "bench-queue-")
		if err != nil {
			queueErr = err
			return
		}
		logger := slog.New(slog.NewTextHandler(io.Discard, nil))
		eng, err := engine.Open(engine.Options{Dir: dir, Logger: logger, WAL: wal.Options{Logger: logger, NoSync: true}})
		if err != nil {
			queueErr = err
			return
		}
		f, err := setUp(eng, layout{workspaces: 1, clientsPerWS: 200, jobsPerWS: 10000, resultsPerJob: 3, alertsPerWS: 2000, workspaceName: "Queue"})
		if err != nil {
			queueErr = err
			return
		}
		hasher := password.NewHasher(password.Params{Time: 1, Memory: 64, Threads: 1}, 1, 0)
		hash, _ := hasher.Hash(context.Background(), "not used by the benchmark")
		u, err := eng.CreateUser(f.wsIDs[0], engine.UserInput{Email: engine.Some("owner@bench.test"), Name: engine.Some("Owner"),
			Role: engine.Some(engine.RoleOwner), Hash: engine.Some(hash)})
		if err != nil {
			queueErr = err
			return
		}
		const secret = "bench-session-secret"
		if err := eng.StartSession(f.wsIDs[0], u.ID, hash, sha256.Sum256([]byte(secret))); err != nil {
			queueErr = err
			return
		}
		d := dashboard.New(dashboard.Config{Engine: eng, Hasher: hasher, Logger: logger})
		queueFix = &queueBench{handler: d.Handler(), cookie: "__Host-session=" + secret, eng: eng}
	})
	if queueErr != nil {
		b.Fatal(queueErr)
	}
	return queueFix
}

// BenchmarkQueuePage renders GET / for the workspace above: the queue's
// 500 worst and oldest of its 2,000 items (target: under 50 ms); /all, with
// ?all, every item.
func BenchmarkQueuePage(b *testing.B) {
	b.Run("default", func(b *testing.B) { benchQueue(b, "/", 500) })
	b.Run("all", func(b *testing.B) { benchQueue(b, "/?all", 2000) })
}

func benchQueue(b *testing.B, uri string, rows int) {
	q := setUpQueue(b)
	var ctx fasthttp.RequestCtx
	var size int
	for b.Loop() {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.SetRequestURI(uri)
		ctx.Request.Header.SetMethod("GET")
		ctx.Request.Header.Set("Cookie", q.cookie)
		q.handler(&ctx)
		if ctx.Response.StatusCode() != 200 {
			b.Fatalf("status %d: %.300s", ctx.Response.StatusCode(), ctx.Response.Body())
		}
		size = len(ctx.Response.Body())
	}
	if n := strings.Count(string(ctx.Response.Body()), "data-row="); n != rows {
		b.Fatalf("%d rows, want %d", n, rows)
	}
	b.ReportMetric(float64(size)/1024, "KiB/page")
}

// BenchmarkLoginHash is one argon2id hash at the dashboard's cost: a
// login's CPU time.
func BenchmarkLoginHash(b *testing.B) {
	h := password.NewHasher(password.Default, 1, 0)
	for b.Loop() {
		if _, err := h.Hash(context.Background(), "correct horse battery"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkQueueRead is the engine's part of the queue page: the typed
// queue read in the workspace's actor, without rendering.
func BenchmarkQueueRead(b *testing.B) {
	q := setUpQueue(b)
	ws := q.eng.Workspaces()[0].ID
	for b.Loop() {
		if _, err := q.eng.Queue(ws); err != nil {
			b.Fatal(err)
		}
	}
}
