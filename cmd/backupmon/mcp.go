package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// backupmon mcp --key-file F (decisions.md 12): the assistant server over
// stdio, for assistants that start a local command. It relays each message
// between stdin/stdout and the running server's POST /mcp, with the key
// read from F, through the SDK's own stdio and streamable-HTTP transports;
// the server, which owns the data, answers every message.

const mcpUsage = `Usage: backupmon mcp --key-file FILE [--url URL]

Speaks the assistant protocol (MCP) on stdin and stdout for a local
assistant, relaying to the server's /mcp endpoint with the assistant key
kept in FILE (the key alone, as created; keep the file private).
`

func mcpCommand(args []string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, mcpUsage); fs.PrintDefaults() }
	keyFile := fs.String("key-file", envDefault("key-file", ""), "file holding the assistant key")
	base := fs.String("url", envDefault("url", "http://127.0.0.1:8080"), "the server's public address (--listen)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 || *keyFile == "" {
		fs.Usage()
		return 2
	}
	raw, err := os.ReadFile(*keyFile)
	if err != nil {
		fmt.Fprintf(stderr, "backupmon mcp: read key: %v\n", err)
		return 1
	}
	key := strings.TrimSpace(string(raw))
	if key == "" || strings.ContainsAny(key, " \t\r\n") {
		fmt.Fprintf(stderr, "backupmon mcp: %s must hold one key and nothing else\n", *keyFile)
		return 1
	}
	u, err := url.Parse(*base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(stderr, "backupmon mcp: --url must be an http or https address, not %q\n", *base)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := relay(ctx, &mcp.IOTransport{Reader: stdin, Writer: stdout}, strings.TrimRight(*base, "/")+"/mcp", key); err != nil {
		fmt.Fprintf(stderr, "backupmon mcp: %v\n", err)
		return 1
	}
	return 0
}

// relay passes messages both ways between the local transport and the
// server's endpoint until the local side closes. The remote connection is
// made again after the server refused or dropped it, so that one refused
// call (a revoked key, the server restarting) does not end the relay.
func relay(ctx context.Context, local mcp.Transport, endpoint, key string) error {
	lc, err := local.Connect(ctx)
	if err != nil {
		return fmt.Errorf("stdio: %w", err)
	}
	defer lc.Close()
	r := &relayer{ctx: ctx, local: lc, pending: map[jsonrpc.ID]bool{}, settled: make(chan struct{}, 1),
		remote: &mcp.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true, MaxRetries: -1,
			HTTPClient: &http.Client{Timeout: time.Minute, Transport: bearerTransport{key: key, next: http.DefaultTransport}}}}
	defer r.closeRemote()
	for {
		msg, err := lc.Read(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) {
				r.drain()
				return nil
			}
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		}
		if err := r.send(msg); err != nil {
			return err
		}
	}
}

// relayer is the state of one relay: the local connection, the current
// remote one, and the calls sent and not yet answered.
type relayer struct {
	ctx    context.Context
	local  mcp.Connection
	remote mcp.Transport

	mu      sync.Mutex
	conn    mcp.Connection // nil until the first message, and after a failure
	pending map[jsonrpc.ID]bool
	settled chan struct{} // a token when pending became empty
	writeMu sync.Mutex    // one writer to stdout at a time
}

// send relays one local message; a call the server refuses is answered
// locally with the server's JSON-RPC error, or -32603 naming the failure.
func (r *relayer) send(msg jsonrpc.Message) error {
	req, call := msg.(*jsonrpc.Request)
	call = call && req.IsCall()
	conn, err := r.connection()
	if err == nil {
		if call {
			r.mu.Lock()
			r.pending[req.ID] = true
			r.mu.Unlock()
		}
		err = conn.Write(r.ctx, msg)
		if err != nil {
			r.dropRemote(conn)
		}
	}
	if err == nil || !call {
		return nil
	}
	r.answered(req.ID)
	wire := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "backupmon server: " + err.Error()}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		wire = je
	}
	return r.write(&jsonrpc.Response{ID: req.ID, Error: wire})
}

// connection returns the remote connection, making one (and its reader)
// when there is none.
func (r *relayer) connection() (mcp.Connection, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conn != nil {
		return r.conn, nil
	}
	conn, err := r.remote.Connect(r.ctx)
	if err != nil {
		return nil, err
	}
	r.conn = conn
	go r.read(conn)
	return conn, nil
}

// read relays the server's messages from conn until it fails; the calls
// still waiting on it are then answered with the failure.
func (r *relayer) read(conn mcp.Connection) {
	for {
		msg, err := conn.Read(r.ctx)
		if err != nil {
			r.dropRemote(conn)
			r.mu.Lock()
			var lost []jsonrpc.ID
			for id := range r.pending {
				lost = append(lost, id)
			}
			r.mu.Unlock()
			for _, id := range lost {
				r.answered(id)
				_ = r.write(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "backupmon server: " + err.Error()}})
			}
			return
		}
		if r.write(msg) != nil {
			return
		}
		if resp, ok := msg.(*jsonrpc.Response); ok {
			r.answered(resp.ID)
		}
	}
}

func (r *relayer) write(msg jsonrpc.Message) error {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	return r.local.Write(r.ctx, msg)
}

func (r *relayer) answered(id jsonrpc.ID) {
	r.mu.Lock()
	delete(r.pending, id)
	empty := len(r.pending) == 0
	r.mu.Unlock()
	if empty {
		select {
		case r.settled <- struct{}{}:
		default:
		}
	}
}

// dropRemote forgets conn if it is still the current connection.
func (r *relayer) dropRemote(conn mcp.Connection) {
	r.mu.Lock()
	if r.conn == conn {
		r.conn = nil
	}
	r.mu.Unlock()
	conn.Close()
}

func (r *relayer) closeRemote() {
	r.mu.Lock()
	conn := r.conn
	r.conn = nil
	r.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
}

// drain waits, at most a minute, for the answers of calls still in flight.
func (r *relayer) drain() {
	deadline := time.After(time.Minute)
	for {
		r.mu.Lock()
		n := len(r.pending)
		r.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-r.settled: // maybe an earlier moment's: look again
		case <-deadline:
			return
		case <-r.ctx.Done():
			return
		}
	}
}

// bearerTransport adds the assistant key to every request.
type bearerTransport struct {
	key  string
	next http.RoundTripper
}

func (t bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.key)
	return t.next.RoundTrip(r)
}
