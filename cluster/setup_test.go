package cluster

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestRetryable: the set-up waits out JetStream not answering and a
// server offline for the moment, and stops at a refusal, which it reports.
func TestRetryable(t *testing.T) {
	noPeers := func(desc string) error {
		return &jetstream.APIError{Code: 400, ErrorCode: jsNoPeers, Description: desc}
	}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"no answer in time", context.DeadlineExceeded, true},
		{"no responders", nats.ErrNoResponders, true},
		{"no stream response", jetstream.ErrNoStreamResponse, true},
		{"timeout, wrapped", fmt.Errorf("create stream BM_S007: %w", nats.ErrTimeout), true},
		{"a server offline", fmt.Errorf("create stream BM_S007: %w", noPeers("no suitable peers for placement, peer offline")), true},
		{"too few servers", noPeers("no suitable peers for placement"), false},
		{"out of storage", noPeers("no suitable peers for placement, insufficient storage"), false},
		{"another API error", &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeBadRequest, Description: "bad request"}, false},
		{"not found", jetstream.ErrStreamNotFound, false},
		{"other", errors.New("permission denied"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := retryable(c.err); got != c.want {
				t.Errorf("retryable(%v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}
