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
// server's endpoint until the local side closes.
func relay(ctx context.Context, local mcp.Transport, endpoint, key string) error {
	lc, err := local.Connect(ctx)
	if err != nil {
		return fmt.Errorf("stdio: %w", err)
	}
	defer lc.Close()
	remote := &mcp.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true, MaxRetries: -1,
		HTTPClient: &http.Client{Timeout: time.Minute, Transport: bearerTransport{key: key, next: http.DefaultTransport}}}
	rc, err := remote.Connect(ctx)
	if err != nil {
		return fmt.Errorf("connect %s: %w", endpoint, err)
	}
	defer rc.Close()
	// Calls sent and not yet answered: when the assistant closes stdin, the
	// relay waits for their answers (at most a minute) before it ends.
	var mu sync.Mutex
	pending := map[jsonrpc.ID]bool{}
	settled := make(chan struct{}, 1)
	answered := func(id jsonrpc.ID) {
		mu.Lock()
		delete(pending, id)
		n := len(pending)
		mu.Unlock()
		if n == 0 {
			select {
			case settled <- struct{}{}:
			default:
			}
		}
	}
	errc := make(chan error, 2)
	go func() {
		for {
			msg, err := lc.Read(ctx)
			if err != nil {
				errc <- err
				return
			}
			req, call := msg.(*jsonrpc.Request)
			call = call && req.IsCall()
			if call {
				mu.Lock()
				pending[req.ID] = true
				mu.Unlock()
			}
			if err := rc.Write(ctx, msg); err != nil && call {
				// A call the server refuses (a revoked key, the server
				// down) is answered as a JSON-RPC error; the relay goes on.
				answered(req.ID)
				reply := &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "backupmon server: " + err.Error()}}
				if err := lc.Write(ctx, reply); err != nil {
					errc <- err
					return
				}
			}
		}
	}()
	go func() {
		for {
			msg, err := rc.Read(ctx)
			if err != nil {
				errc <- err
				return
			}
			if err := lc.Write(ctx, msg); err != nil {
				errc <- err
				return
			}
			if resp, ok := msg.(*jsonrpc.Response); ok {
				answered(resp.ID)
			}
		}
	}()
	err = <-errc
	if errors.Is(err, io.EOF) {
		deadline := time.After(time.Minute)
		for {
			mu.Lock()
			n := len(pending)
			mu.Unlock()
			if n == 0 {
				return nil
			}
			select {
			case <-settled: // maybe an earlier moment's: look again
			case <-deadline:
				return nil
			case <-ctx.Done():
				return nil
			}
		}
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
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
