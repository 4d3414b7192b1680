package cluster

import (
	"crypto/tls"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"backupmon/clustertls"
)

// The forwarding wire against one HTTP exchange per request (the way of
// 0604e3f): many requests in flight, each answered by the owner after a
// delay like a durable report's (its append's acknowledgement), both ends
// in this process over loopback. Reported: the process's CPU per request
// (user and system), the figure that limits a cluster on one machine.
//
//	go test -run '^$' -bench 'BenchmarkPeer' -benchtime 20000x ./cluster

const (
	benchOwnerDelay = 2 * time.Millisecond
	benchInFlight   = 64
)

var benchReq = make([]byte, 600) // about a report's forwarding message

func BenchmarkPeerWire(b *testing.B) {
	p := startFakePeer(b, func(int, []byte) string {
		time.Sleep(benchOwnerDelay)
		return string(benchReq[:100])
	})
	l := newLink(p.ln.Addr().String(), []byte("k"), nil)
	defer l.close()
	runPeerBench(b, func() error {
		return l.do(3, benchReq, 5*time.Second, func([]byte) error { return nil })
	})
}

func BenchmarkPeerHTTP(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		time.Sleep(benchOwnerDelay)
		ctx.SetBody(benchReq[:100])
	}, NoDefaultDate: true, NoDefaultContentType: true}
	go srv.Serve(ln)
	defer srv.Shutdown()
	c := &fasthttp.HostClient{Addr: ln.Addr().String(), MaxConns: 1024, NoDefaultUserAgentHeader: true, DisablePathNormalizing: true}
	runPeerBench(b, func() error {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.Header.SetMethod(fasthttp.MethodPost)
		req.SetRequestURI("/forward/s003")
		req.Header.SetHost(c.Addr)
		req.Header.Set("X-Backupmon-Peer", "k")
		req.SetBodyRaw(benchReq)
		return c.DoTimeout(req, resp, 5*time.Second)
	})
}

// BenchmarkPeerTLS: what the cluster's TLS costs a forwarded request, the
// link to a real peer listener (a node serving no shard, so it answers
// "not serving" at once) in clear and over TLS.
//
//	go test -run '^$' -bench 'BenchmarkPeerTLS' -benchtime 50000x ./cluster
func BenchmarkPeerTLS(b *testing.B) {
	const secret = "0123456789abcdef0123456789abcdef"
	f, err := clustertls.Issue(b.TempDir(), "n1", []string{"127.0.0.1"}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	tlsc, err := clustertls.Load(f, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tls  *tls.Config
	}{{"clear", nil}, {"tls", tlsc}} {
		b.Run(tc.name, func(b *testing.B) {
			addr := startPeerServerTLS(b, secret, io.Discard, tc.tls)
			l := newLink(addr, []byte(secret), tc.tls)
			defer l.close()
			runPeerBench(b, func() error {
				return l.do(3, benchReq, 5*time.Second, func([]byte) error { return nil })
			})
		})
	}
}

// runPeerBench runs do b.N times from benchInFlight goroutines and reports
// the process's CPU per call.
func runPeerBench(b *testing.B, do func() error) {
	for range benchInFlight { // warm: connections made
		if err := do(); err != nil {
			b.Fatal(err)
		}
	}
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ResetTimer()
	work := make(chan struct{}, b.N)
	for range b.N {
		work <- struct{}{}
	}
	close(work)
	errs := make(chan error, benchInFlight)
	for range benchInFlight {
		go func() {
			for range work {
				if err := do(); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range benchInFlight {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano()-before.Utime.Nano()) + time.Duration(after.Stime.Nano()-before.Stime.Nano())
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
}
