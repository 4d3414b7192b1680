package main

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// `backupmon nats --cluster-advertise host:port` gives the other servers
// that address as its route address (the "ip" of the INFO its route
// listener sends, which a server that learns of it from a third dials);
// without the flag the INFO names none. A value that is not host:port, or
// the flag without --cluster-listen, stops it (exit 2, naming the flag)
// before it makes a store.
func TestNatsClusterAdvertise(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		for _, tt := range []struct {
			name string
			args []string
			want string
		}{
			{"not host:port", []string{"--insecure-no-tls", "--cluster-listen", "127.0.0.1:0", "--cluster-advertise", "no-port"}, `--cluster-advertise "no-port": want host:port`},
			{"no route listener", []string{"--cluster-advertise", "127.0.0.1:7777"}, "--cluster-advertise needs --cluster-listen"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				store := filepath.Join(t.TempDir(), "store")
				var out, errOut bytes.Buffer
				code := natsCommand(append([]string{"--listen", "127.0.0.1:0", "--store", store}, tt.args...), &out, &errOut)
				if code != 2 || !strings.Contains(errOut.String(), tt.want) {
					t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errOut.String(), tt.want)
				}
				if _, err := os.Stat(store); !os.IsNotExist(err) {
					t.Fatalf("the store was made (%v)", err)
				}
			})
		}
	})
	// Two servers routed to each other (JetStream needs a route): n1
	// advertises, n2 does not.
	_, routes := startRoutedNats(t, [2][]string{{"--cluster-advertise", "127.0.0.1:7777"}, nil})
	for _, tt := range []struct {
		name       string
		route      int
		want       string
		advertised bool
	}{
		{"advertised", 0, `"ip":"nats-route://127.0.0.1:7777/"`, true},
		{"by default", 1, `"ip":`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.DialTimeout("tcp", routes[tt.route], 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			info, err := bufio.NewReader(c).ReadString('\n')
			if err != nil || !strings.HasPrefix(info, "INFO {") {
				t.Fatalf("the route listener's first line: %q %v", info, err)
			}
			if has := strings.Contains(info, tt.want); has != tt.advertised {
				t.Fatalf("route INFO %q: has %s = %v, want %v", info, tt.want, has, tt.advertised)
			}
		})
	}
}
