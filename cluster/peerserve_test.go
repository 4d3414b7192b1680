package cluster

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"backupmon/clustertls"
	"backupmon/internal/syncbuf"
)

// startPeerServer serves the peer listener of a node that hosts no shard,
// with the cluster's peer secret secret, on a loopback port it returns.
func startPeerServer(t *testing.T, secret string) string {
	t.Helper()
	return startPeerServerLog(t, secret, io.Discard)
}

// startPeerServerLog is startPeerServer with the node's log written to log.
func startPeerServerLog(t *testing.T, secret string, log io.Writer) string {
	t.Helper()
	return startPeerServerTLS(t, secret, log, nil)
}

// startPeerServerTLS is startPeerServerLog with the cluster's TLS tlsc.
func startPeerServerTLS(t testing.TB, secret string, log io.Writer, tlsc *tls.Config) string {
	t.Helper()
	n := &Node{log: slog.New(slog.NewTextHandler(log, nil)), hosted: map[int]*hosted{}, cfg: Config{Credentials: Credentials{TLS: tlsc}},
		peers: &peers{secret: []byte(secret), links: map[string]*link{}}}
	if err := n.listenPeers("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.stopPeers)
	return n.peerAddr
}

// goodHello is the first frame of a node of the cluster whose peer secret
// is secret.
func goodHello(secret string) []byte {
	hello := binary.BigEndian.AppendUint32(nil, uint32(len(peerHello)+len(secret)))
	return append(append(hello, peerHello...), secret...)
}

// askPeer sends a request for shard 3 on c, after hello when it is not
// nil, and returns the error of reading its answer, which must be "not
// serving" (the node hosts no shard).
func askPeer(t *testing.T, c net.Conn, hello []byte) error {
	t.Helper()
	if _, err := c.Write(appendRequestFrame(hello, 7, 3, []byte("request"))); err != nil {
		return err
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	answer, err := readFrame(bufio.NewReader(c), nil, answerHead)
	if err != nil {
		return err
	}
	if id := binary.BigEndian.Uint64(answer); id != 7 || string(answer[answerHead:]) != string(notServing) {
		t.Errorf("answer %d %q, want 7 %q", id, answer[answerHead:], notServing)
	}
	return nil
}

// TestPeerConnectionsBounded: connections that never say hello hold the
// listener's places for an address up to its limit and no further: the
// next one is closed at once, and a node greeting from elsewhere (here,
// once they are gone) is served.
func TestPeerConnectionsBounded(t *testing.T) {
	const secret = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
	addr := startPeerServer(t, secret)
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range maxPeerConnsPerAddress {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := askPeer(t, c, goodHello(secret)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("connection %d from one address: %v, want it closed at once", maxPeerConnsPerAddress+1, err)
	}
	for _, c := range idle {
		c.Close()
	}
	idle = nil
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		err = askPeer(t, c, goodHello(secret))
		c.Close()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a good hello once the idle connections closed: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPeerHelloBounded: the peer listener is reachable before anyone has
// shown the secret, so a first frame longer than any hello is refused when
// its length arrives: the connection is closed at once, and the bytes it
// announced (up to 64 MiB, the bound of a forwarded request) are never
// set aside. A good hello is still served.
func TestPeerHelloBounded(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	addr := startPeerServer(t, secret)

	for _, tc := range []struct {
		what string
		size uint32
	}{
		{"the most a forwarded request may be", peerBodyLimit + requestHead},
		{"one byte more than a hello with the secret", uint32(len(peerHello) + len(secret) + 1)},
	} {
		t.Run(tc.what, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			if _, err := c.Write(binary.BigEndian.AppendUint32(nil, tc.size)); err != nil {
				t.Fatal(err)
			}
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			_, err = c.Read(make([]byte, 1))
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("a first frame announcing %d bytes kept the connection open, waiting for them", tc.size)
			}
			runtime.ReadMemStats(&after)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
				t.Errorf("a first frame announcing %d bytes allocated %d bytes", tc.size, grew)
			}
		})
	}

	t.Run("a good hello is served", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := askPeer(t, c, goodHello(secret)); err != nil {
			t.Fatalf("no answer after a good hello: %v", err)
		}
	})
}

// TestPeerRefusalsLogOneLine: a connection refused for its hello is
// logged, and anyone who reaches the port can open them as fast as it
// connects: within 10 seconds one line goes to the log, whatever their
// number.
func TestPeerRefusalsLogOneLine(t *testing.T) {
	const secret = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	var logs syncbuf.Buffer
	addr := startPeerServerLog(t, secret, &logs)
	const n = 30
	for i := range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if err := askPeer(t, c, goodHello(secret[:len(secret)-1]+"0")); err == nil {
			t.Fatalf("connection %d was served with a wrong secret", i)
		}
		c.Close()
	}
	if got := strings.Count(logs.String(), "without the cluster's peer secret"); got != 1 {
		t.Errorf("%d refused connections logged %d lines, want 1:\n%s", n, got, logs.String())
	}
}

// TestPeerLinkTLS: with the cluster's TLS, a link whose certificate the
// cluster's authority signed is answered; a link in clear, one of another
// authority, and one that dials a host the peer's certificate does not
// name are not (the front then goes over NATS), and the listener logs
// the refusals.
func TestPeerLinkTLS(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	now := time.Now()
	member := func(dir, name string, hosts ...string) *tls.Config {
		f, err := clustertls.Issue(dir, name, hosts, now)
		if err != nil {
			t.Fatal(err)
		}
		c, err := clustertls.Load(f, now)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ours, theirs := t.TempDir(), t.TempDir()
	var log syncbuf.Buffer
	addr := startPeerServerTLS(t, secret, &log, member(ours, "n1", "127.0.0.1"))
	_, port, _ := net.SplitHostPort(addr)
	for _, tc := range []struct {
		name, addr string
		tls        *tls.Config
		want       string // "" answered, else in the error
		logged     string
	}{
		{"member of the cluster", addr, member(ours, "n2", "127.0.0.2"), "", ""},
		{"in clear", addr, nil, "could not be reached", "a peer connection without a certificate of the cluster"},
		{"another authority", addr, member(theirs, "n2", "127.0.0.2"), "certificate signed by unknown authority", ""},
		{"host not in the certificate", "localhost:" + port, member(ours, "n3", "127.0.0.3"), "certificate is not valid for any names, but wanted to match localhost", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLink(tc.addr, []byte(secret), tc.tls)
			defer l.close()
			var got []byte
			err := l.do(3, []byte("request"), 5*time.Second, func(a []byte) error { got = append(got, a...); return nil })
			if tc.want == "" {
				if err != nil || string(got) != string(notServing) {
					t.Fatalf("answer %q, err %v; want %q", got, err, notServing)
				}
				return
			}
			if !errors.Is(err, errUnreached) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want errUnreached with %q", err, tc.want)
			}
			if tc.logged != "" {
				deadline := time.Now().Add(5 * time.Second)
				for !strings.Contains(log.String(), tc.logged) {
					if time.Now().After(deadline) {
						t.Fatalf("log %q, want %q", log.String(), tc.logged)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
}
