package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"backupmon/internal/testserver"
)

// TestNodeChecksNATSSync: with --cluster-nats-monitor a node reads each
// NATS server's /jsz before it joins, and refuses to start, in one error
// line naming the server, when one does not fsync every write
// (sync_interval: always); a monitor that does not answer is logged and
// left out. backupmon nats fsyncs every write.
func TestNodeChecksNATSSync(t *testing.T) {
	ports := freePorts(t, 4)
	addr, monitor := "127.0.0.1:"+strconv.Itoa(ports[0]), "http://127.0.0.1:"+strconv.Itoa(ports[1])
	closed := "http://127.0.0.1:" + strconv.Itoa(ports[3])
	startNats(t, "n1", "--listen", addr, "--monitor-listen", strings.TrimPrefix(monitor, "http://"))
	node := []string{"--cluster", "nats://" + addr, "--node-id", "b1", "--cluster-replicas", "1"}

	t.Run("synced", func(t *testing.T) {
		c := testserver.StartChild(t, "node", t.TempDir(), append(node, "--cluster-nats-monitor", monitor+","+closed)...)
		log := c.Stderr.String()
		for _, want := range []string{
			`level=INFO msg="the NATS server fsyncs every write" monitor=` + monitor,
			`level=WARN msg="the NATS server's fsync setting could not be read; it was not checked" monitor=` + closed,
		} {
			if !strings.Contains(log, want) {
				t.Errorf("log without %s:\n%s", want, testserver.Tail(log, 20))
			}
		}
	})

	t.Run("not synced", func(t *testing.T) {
		lazyAddr := "127.0.0.1:" + strconv.Itoa(ports[2])
		lazyPorts := freePorts(t, 1)
		o := &natsserver.Options{ServerName: "lazy", Host: "127.0.0.1", Port: ports[2], HTTPHost: "127.0.0.1", HTTPPort: lazyPorts[0],
			JetStream: true, StoreDir: filepath.Join(t.TempDir(), "store"), NoSigs: true, NoLog: true} // sync_interval left at its default
		s, err := natsserver.NewServer(o)
		if err != nil {
			t.Fatal(err)
		}
		go s.Start()
		t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
		if !s.ReadyForConnections(10 * time.Second) {
			t.Fatal("the NATS server did not start")
		}
		lazyMonitor := "http://127.0.0.1:" + strconv.Itoa(lazyPorts[0])
		args := []string{"--cluster", "nats://" + lazyAddr, "--node-id", "b1", "--cluster-replicas", "1", "--cluster-nats-monitor", monitor + "," + lazyMonitor}
		nodeStopsAtStart(t, args,
			`err="the NATS server at `+lazyMonitor+` does not fsync every write (its /jsz shows no sync_interval: always): it acknowledges writes before they are on disk, and a power cut can lose reports the cluster said were recorded; set sync_interval: always in its jetstream block (backupmon nats does)"`)
	})

	t.Run("flag", func(t *testing.T) {
		for _, bad := range []string{"nats://127.0.0.1:8222", "127.0.0.1:8222", "http://"} {
			_, err := parseServeFlags(append(append([]string{}, node...), "--cluster-nats-monitor", monitor+","+bad))
			want := `--cluster-nats-monitor must be http:// or https:// addresses of the NATS servers' monitoring, comma separated, not "` + bad + `"`
			if err == nil || err.Error() != want {
				t.Errorf("--cluster-nats-monitor %s: %v, want %s", bad, err, want)
			}
		}
		c, err := parseServeFlags(append(append([]string{}, node...), "--cluster-nats-monitor", " http://h1:8222, https://h2:8222/ "))
		if err != nil || strings.Join(c.clusterMonitors, " ") != "http://h1:8222 https://h2:8222/" {
			t.Fatalf("two monitors: %q %v", c.clusterMonitors, err)
		}
	})
}
