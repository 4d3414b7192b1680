package cluster

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"testing"
	"time"
)

// startPeerServer serves the peer listener of a node that hosts no shard,
// with the cluster's peer secret secret, on a loopback port it returns.
func startPeerServer(t *testing.T, secret string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := &Node{log: slog.New(slog.NewTextHandler(io.Discard, nil)), hosted: map[int]*hosted{},
		peers:      &peers{secret: []byte(secret)},
		peerServer: &peerServer{ln: ln, conns: map[*sender]struct{}{}}}
	go n.acceptPeers()
	t.Cleanup(n.stopPeers)
	return ln.Addr().String()
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
		hello := binary.BigEndian.AppendUint32(nil, uint32(len(peerHello)+len(secret)))
		hello = append(append(hello, peerHello...), secret...)
		if _, err := c.Write(appendRequestFrame(hello, 7, 3, []byte("request"))); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		answer, err := readFrame(bufio.NewReader(c), nil, answerHead)
		if err != nil {
			t.Fatalf("no answer after a good hello: %v", err)
		}
		if id := binary.BigEndian.Uint64(answer); id != 7 || string(answer[answerHead:]) != string(notServing) {
			t.Errorf("answer %d %q, want 7 %q", id, answer[answerHead:], notServing)
		}
	})
}
