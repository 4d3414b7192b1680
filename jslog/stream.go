package jslog

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// MaxMessageBytes bounds a message of a shard's stream (the stream refuses
// larger ones); Options.MaxBytes stays under it.
const MaxMessageBytes = 1 << 20

// CreateStream makes (or finds, unchanged) the stream of a shard: file
// storage, the given replicas, no deletes and no age limit, so that only the
// log itself drops messages (TruncateFront, after a snapshot).
func CreateStream(ctx context.Context, js jetstream.JetStream, name, subject string, replicas int) (jetstream.Stream, error) {
	st, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:       name,
		Subjects:   []string{subject},
		Storage:    jetstream.FileStorage,
		Replicas:   replicas,
		Retention:  jetstream.LimitsPolicy,
		Discard:    jetstream.DiscardOld,
		DenyDelete: true,
		MaxMsgSize: MaxMessageBytes,
	})
	if err != nil {
		return nil, fmt.Errorf("create stream %s: %w", name, err)
	}
	return st, nil
}
