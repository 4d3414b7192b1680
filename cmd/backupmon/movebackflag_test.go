package main

import (
	"testing"
	"time"
)

// TestMoveBackFlag: --cluster-move-back (or BACKUPMON_CLUSTER_MOVE_BACK)
// sets how long a node is up before its shards move back to it, 30 s by
// default, and a value that is no duration from 1s to 1h is refused.
func TestMoveBackFlag(t *testing.T) {
	cliUnsetEnv(t, "BACKUPMON_CLUSTER_MOVE_BACK")
	node := []string{"--cluster", "nats://127.0.0.1:4222", "--node-id", "b1", "--cluster-auth-file", natsSecretFile(t, testSecret)}
	for _, tc := range []struct {
		name, env string
		args      []string
		want      time.Duration
		err       string
	}{
		{name: "default", want: 30 * time.Second},
		{name: "flag", args: []string{"--cluster-move-back", "5s"}, want: 5 * time.Second},
		{name: "environment", env: "2m", want: 2 * time.Minute},
		{name: "flag over environment", env: "2m", args: []string{"--cluster-move-back", "1s"}, want: time.Second},
		{name: "zero", args: []string{"--cluster-move-back", "0s"}, err: `--cluster-move-back must be a duration from 1s to 1h, not "0s"`},
		{name: "too long", args: []string{"--cluster-move-back", "2h"}, err: `--cluster-move-back must be a duration from 1s to 1h, not "2h"`},
		{name: "no unit", env: "30", err: `--cluster-move-back must be a duration from 1s to 1h, not "30"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("BACKUPMON_CLUSTER_MOVE_BACK", tc.env)
			}
			c, err := parseServeFlags(append(append([]string{}, node...), tc.args...))
			switch {
			case tc.err != "" && (err == nil || err.Error() != tc.err):
				t.Fatalf("error %v, want %s", err, tc.err)
			case tc.err == "" && err != nil:
				t.Fatal(err)
			case tc.err == "" && c.clusterMoveBack != tc.want:
				t.Fatalf("move-back %v, want %v", c.clusterMoveBack, tc.want)
			}
		})
	}
}
