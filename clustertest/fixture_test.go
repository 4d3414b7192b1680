package clustertest

import (
	"fmt"
	"testing"

	"backupmon/cluster"
	"backupmon/internal/testserver"
)

// target is where a report goes: a job of a workspace, with one of the
// workspace's report keys.
type target struct {
	ws, job, key string
	shard        int
}

// fixture is the load's workspaces: every shard holds some.
type fixture struct {
	targets []target
	rest    map[string]string // workspace → REST key (all scopes)
	shardOf map[string]int    // workspace → shard
}

// newFixture creates workspaces (plan pro) until every shard has at least
// two, each with jobs and three report keys (the Report API allows 60
// reports a minute per key, and 100 a day per job, so the load spreads).
func newFixture(t *testing.T, c *testserver.Client, shards, jobsPerWorkspace int) *fixture {
	t.Helper()
	f := &fixture{rest: map[string]string{}, shardOf: map[string]int{}}
	count := make([]int, shards)
	covered := func() bool {
		for _, n := range count {
			if n < 2 {
				return false
			}
		}
		return true
	}
	for i := 0; !covered(); i++ {
		if i == 8*shards {
			t.Fatalf("after %d workspaces, shards hold %v", i, count)
		}
		ws := c.NewWorkspace(map[string]any{"name": fmt.Sprintf("chaos %d", i), "plan": "pro"})
		rest, _ := c.NewKey(ws, "rest", nil)
		shard, ok := cluster.KeyShard(rest, shards)
		if !ok {
			t.Fatalf("REST key %q names no shard", rest)
		}
		count[shard]++
		f.rest[ws], f.shardOf[ws] = rest, shard
		client := c.NewClient(ws, "client")
		var keys []string
		for range 3 {
			k, _ := c.NewKey(ws, "report", nil)
			if s, _ := cluster.KeyShard(k, shards); s != shard {
				t.Fatalf("report key of workspace %s names shard %d, its REST key %d", ws, s, shard)
			}
			keys = append(keys, k)
		}
		for j := range jobsPerWorkspace {
			job := c.NewJob(ws, client, fmt.Sprintf("job %d", j), testserver.Daily())
			f.targets = append(f.targets, target{ws: ws, job: job, key: keys[j%len(keys)], shard: shard})
		}
	}
	return f
}
