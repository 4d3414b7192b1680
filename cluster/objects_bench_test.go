package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"backupmon/natstest"
)

// BenchmarkObjectPut writes objects into a store replicated on three NATS
// servers in this process: ours (a window of putWindow chunks) against
// nats.go's Put (every chunk at once), at a snapshot's sizes.
//
//	go test -run '^$' -bench ObjectPut -benchtime 10x ./cluster/
func BenchmarkObjectPut(b *testing.B) {
	c := natstest.Start(b, 3)
	js, err := objectJS(c.Connect(b))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "objs", Replicas: 3, Storage: jetstream.FileStorage}); err != nil {
		b.Fatal(err)
	}
	o, err := openObjects(ctx, js, "objs", nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []int{1 << 20, 32 << 20} {
		body := randomBytes(size)
		for _, put := range []struct {
			name string
			put  func(ctx context.Context, name string, data []byte) (*jetstream.ObjectInfo, error)
		}{{"ours", o.PutBytes}, {"nats.go", o.read.PutBytes}} {
			b.Run(fmt.Sprintf("%s/%dMiB", put.name, size>>20), func(b *testing.B) {
				b.SetBytes(int64(size))
				for i := 0; b.Loop(); i++ {
					name := fmt.Sprintf("%s/%d/%d", put.name, size, i)
					if _, err := put.put(ctx, name, body); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					// A read right after a write can miss it: the store's
					// stream answers reads from any replica.
					for try := 0; ; try++ {
						err := o.Delete(ctx, name)
						if err == nil {
							break
						}
						if try == 50 {
							b.Fatal(err)
						}
						time.Sleep(100 * time.Millisecond)
					}
					b.StartTimer()
				}
			})
		}
	}
}
