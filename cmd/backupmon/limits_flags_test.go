package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"backupmon/smtpin"
	"backupmon/transport/connlimit"
)

var limitEnv = []string{"BACKUPMON_MAX_CONNECTIONS", "BACKUPMON_MAX_CONNECTIONS_PER_ADDRESS", "BACKUPMON_ADMIN_MAX_CONNECTIONS",
	"BACKUPMON_ADMIN_MAX_CONNECTIONS_PER_ADDRESS", "BACKUPMON_SMTP_MAX_SESSIONS", "BACKUPMON_SMTP_MAX_SESSIONS_PER_ADDRESS",
	"BACKUPMON_SMTP_SESSION_LIFETIME", "BACKUPMON_SMTP_MESSAGE_MEMORY", "BACKUPMON_READ_TIMEOUT", "BACKUPMON_SMTP_READ_TIMEOUT",
	"BACKUPMON_MEMORY_LIMIT"}

// The limit flags: defaults, flags, their BACKUPMON_* forms (a flag wins),
// and each bad value refused with its message.
func TestLimitFlags(t *testing.T) {
	cliUnsetEnv(t, limitEnv...)
	c, err := parseServeFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := limitsConfig{public: connlimit.Limits{Total: 8192, PerAddress: 256}, admin: connlimit.Limits{Total: 128, PerAddress: 64},
		smtpSessions: 512, smtpPerAddr: 32}
	if got := c.limits.withDefaults(); got != want {
		t.Errorf("defaults: %+v, want %+v", got, want)
	}
	if c.limits.memorySet || c.limits.readTimeout != 0 || c.limits.smtpTimeout != 0 || c.limits.smtpLifetime != 0 || c.limits.smtpMemory != 0 {
		t.Errorf("defaults: %+v", c.limits)
	}

	full := limitsConfig{public: connlimit.Limits{Total: 100, PerAddress: 10}, admin: connlimit.Limits{Total: 20, PerAddress: 5},
		smtpSessions: 50, smtpPerAddr: 4, smtpLifetime: 90 * time.Second, smtpMemory: 64 << 20,
		readTimeout: 5 * time.Second, smtpTimeout: time.Minute, memoryLimit: 4 << 30, memorySet: true,
		publicSet: true, adminSet: true, smtpSet: true}
	values := map[string]string{"max-connections": "100", "max-connections-per-address": "10", "admin-max-connections": "20",
		"admin-max-connections-per-address": "5", "smtp-max-sessions": "50", "smtp-max-sessions-per-address": "4",
		"smtp-session-lifetime": "90s", "smtp-message-memory": "64MiB", "read-timeout": "5s", "smtp-read-timeout": "1m",
		"memory-limit": "4GiB"}
	var args []string
	for k, v := range values {
		args = append(args, "--"+k, v)
	}
	if c, err := parseServeFlags(args); err != nil || c.limits != full {
		t.Errorf("flags: %v %+v, want %+v", err, c.limits, full)
	}
	t.Run("environment", func(t *testing.T) {
		for k, v := range values {
			t.Setenv("BACKUPMON_"+strings.ToUpper(strings.ReplaceAll(k, "-", "_")), v)
		}
		if c, err := parseServeFlags(nil); err != nil || c.limits != full {
			t.Errorf("environment: %v %+v, want %+v", err, c.limits, full)
		}
		c, err := parseServeFlags([]string{"--max-connections", "7", "--memory-limit", "off"})
		if err != nil || c.limits.public.Total != 7 || c.limits.public.PerAddress != 10 || !c.limits.memorySet || c.limits.memoryLimit != 0 {
			t.Errorf("flags over environment: %v %+v", err, c.limits)
		}
	})

	for _, tc := range []struct{ args, env []string }{
		{args: []string{"--memory-limit", "0"}},
		{args: []string{"--memory-limit", "off"}},
		{env: []string{"BACKUPMON_MEMORY_LIMIT", "off"}},
	} {
		t.Run(fmt.Sprint("no memory limit ", tc.args, tc.env), func(t *testing.T) {
			if tc.env != nil {
				t.Setenv(tc.env[0], tc.env[1])
			}
			if c, err := parseServeFlags(tc.args); err != nil || !c.limits.memorySet || c.limits.memoryLimit != 0 {
				t.Errorf("%v %+v", err, c.limits)
			}
		})
	}

	for _, tc := range []struct {
		args []string
		env  string // BACKUPMON_<name>=value, instead of args
		want string
	}{
		{args: []string{"--max-connections", "0"}, want: `--max-connections must be a positive integer, not "0"`},
		{args: []string{"--max-connections-per-address", "-3"}, want: `--max-connections-per-address must be a positive integer, not "-3"`},
		{args: []string{"--admin-max-connections", "many"}, want: `--admin-max-connections must be a positive integer, not "many"`},
		{args: []string{"--admin-max-connections-per-address", "1.5"}, want: `--admin-max-connections-per-address must be a positive integer, not "1.5"`},
		{args: []string{"--smtp-max-sessions", ""}, want: ""}, // empty: the default
		{args: []string{"--smtp-max-sessions-per-address", "0x10"}, want: `--smtp-max-sessions-per-address must be a positive integer, not "0x10"`},
		{args: []string{"--smtp-session-lifetime", "10"}, want: `--smtp-session-lifetime must be a duration such as 30s or 5m, not "10"`},
		{args: []string{"--read-timeout", "-1s"}, want: `--read-timeout must be a duration such as 30s or 5m, not "-1s"`},
		{args: []string{"--smtp-read-timeout", "0s"}, want: `--smtp-read-timeout must be a duration such as 30s or 5m, not "0s"`},
		{args: []string{"--smtp-message-memory", "lots"}, want: `--smtp-message-memory must be a size such as 256MiB, not "lots"`},
		{args: []string{"--smtp-message-memory", "0"}, want: `--smtp-message-memory must be a size such as 256MiB, not "0"`},
		{args: []string{"--smtp-message-memory", "16MiB"}, want: `--smtp-message-memory must be at least 23MiB with 512 SMTP sessions (a message of 10 MiB beside each session's share), not "16MiB"`},
		{args: []string{"--smtp-message-memory", "32MiB", "--smtp-max-sessions", "4096"}, want: `--smtp-message-memory must be at least 37MiB with 4096 SMTP sessions (a message of 10 MiB beside each session's share), not "32MiB"`},
		{args: []string{"--memory-limit", "4 GB of RAM"}, want: `--memory-limit must be a size such as 4GiB or 512MiB, or off, not "4 GB of RAM"`},
		{args: []string{"--memory-limit", "-1GiB"}, want: `--memory-limit must be a size such as 4GiB or 512MiB, or off, not "-1GiB"`},
		{args: []string{"--memory-limit", "none"}, want: `--memory-limit must be a size such as 4GiB or 512MiB, or off, not "none"`},
		{env: "BACKUPMON_MAX_CONNECTIONS=lots", want: `--max-connections must be a positive integer, not "lots"`},
		{env: "BACKUPMON_SMTP_SESSION_LIFETIME=forever", want: `--smtp-session-lifetime must be a duration such as 30s or 5m, not "forever"`},
		{env: "BACKUPMON_MEMORY_LIMIT=4XB", want: `--memory-limit must be a size such as 4GiB or 512MiB, or off, not "4XB"`},
	} {
		t.Run(fmt.Sprint(tc.args, tc.env), func(t *testing.T) {
			if tc.env != "" {
				k, v, _ := strings.Cut(tc.env, "=")
				t.Setenv(k, v)
			}
			c, err := parseServeFlags(tc.args)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("accepted: %+v", c.limits)
			case tc.want != "" && err.Error() != tc.want:
				t.Fatalf("error %q, want %q", err, tc.want)
			}
		})
	}
	if least := smtpin.MinMessageMemory(512); least <= 22<<20 || least > 23<<20 {
		t.Errorf("MinMessageMemory(512) = %d", least)
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64 // -1: an error
	}{
		{"0", 0}, {"1048576", 1 << 20}, {"512MiB", 512 << 20}, {"4GiB", 4 << 30}, {"4gib", 4 << 30}, {"1TiB", 1 << 40},
		{"64KiB", 64 << 10}, {"2G", 2 << 30}, {"100M", 100 << 20}, {"1.5GiB", 3 << 29}, {"1GB", 1e9}, {"500MB", 5e8},
		{"10 MiB", 10 << 20}, {"7B", 7}, {"4611686018427387904", 1 << 62},
		{"", -1}, {"GiB", -1}, {"-1", -1}, {"+1", -1}, {"1.5", -1}, {"1.GiB", -1}, {"1e3", -1}, {"4XB", -1}, {"0x10", -1},
		{"4611686018427387905", -1}, {"5000000TiB", -1}, {"1.0000000001GiB", -1}, {" 4GiB", -1},
	} {
		t.Run(tc.in, func(t *testing.T) {
			n, err := parseSize(tc.in)
			if tc.want < 0 {
				if err == nil {
					t.Fatalf("accepted as %d", n)
				}
				return
			}
			if err != nil || n != tc.want {
				t.Fatalf("%d %v, want %d", n, err, tc.want)
			}
		})
	}
}

// FuzzParseSize: a size is either refused or between 0 and 2^62, and the
// whole-unit writing of one reads back the same.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"4GiB", "512MiB", "0", "1.5GB", "off", "12 k", "9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		if err != nil {
			return
		}
		if n < 0 || n > 1<<62 {
			t.Fatalf("%q read as %d", s, n)
		}
		out := formatSize(n)
		if !strings.Contains(out, ".") {
			if back, err := parseSize(out); err != nil || back != n {
				t.Fatalf("%q → %d → %q → %d %v", s, n, out, back, err)
			}
		}
	})
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0B", 1023: "1023B", 1024: "1KiB", 1536: "1.50KiB", 256 << 20: "256MiB", 3 << 29: "1.50GiB",
		18513063 << 10: "17.66GiB", 4 << 30: "4GiB"} {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// The memory there is: the lowest cgroup limit (v2 memory.max, v1
// memory.limit_in_bytes, on the way to the root) or MemTotal, whichever is
// lower; "max" and v1's "no limit" are none.
func TestMemoryAvailable(t *testing.T) {
	const meminfo = "MemTotal:       24684084 kB\nMemFree:        1000 kB\n"
	const machine = int64(24684084) << 10
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  int64
		from  string
	}{
		{"v2 limit", map[string]string{"proc/self/cgroup": "0::/app.slice/bm.service\n", "sys/fs/cgroup/app.slice/bm.service/memory.max": "4294967296\n", "proc/meminfo": meminfo},
			4 << 30, "cgroup /sys/fs/cgroup/app.slice/bm.service/memory.max"},
		{"v2 limit on a parent", map[string]string{"proc/self/cgroup": "0::/app.slice/bm.service\n", "sys/fs/cgroup/app.slice/bm.service/memory.max": "max\n",
			"sys/fs/cgroup/app.slice/memory.max": "2147483648\n", "proc/meminfo": meminfo}, 2 << 30, "cgroup /sys/fs/cgroup/app.slice/memory.max"},
		{"v2 in a namespace", map[string]string{"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/memory.max": "1073741824\n", "proc/meminfo": meminfo},
			1 << 30, "cgroup /sys/fs/cgroup/memory.max"},
		{"v2 max", map[string]string{"proc/self/cgroup": "0::/x\n", "sys/fs/cgroup/x/memory.max": "max\n", "proc/meminfo": meminfo}, machine, "/proc/meminfo MemTotal"},
		{"v1 limit", map[string]string{"proc/self/cgroup": "4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n0::/\n",
			"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "536870912\n", "proc/meminfo": meminfo}, 512 << 20, "cgroup /sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes"},
		{"v1 no limit", map[string]string{"proc/self/cgroup": "4:memory:/docker/abc\n", "sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "9223372036854771712\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n", "proc/meminfo": meminfo}, machine, "/proc/meminfo MemTotal"},
		{"cgroup over the machine", map[string]string{"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/memory.max": "99999999999999\n", "proc/meminfo": meminfo}, machine, "/proc/meminfo MemTotal"},
		{"no cgroup file", map[string]string{"proc/meminfo": meminfo}, machine, "/proc/meminfo MemTotal"},
		{"cgroup only", map[string]string{"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/memory.max": "1073741824\n"}, 1 << 30, "cgroup /sys/fs/cgroup/memory.max"},
		{"nothing", map[string]string{}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for p, body := range tc.files {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, p), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			n, from, err := memoryAvailable(root)
			if tc.want == 0 {
				if err == nil {
					t.Fatalf("found %d from %s", n, from)
				}
				return
			}
			if err != nil || n != tc.want || from != tc.from {
				t.Fatalf("%d from %q (%v), want %d from %q", n, from, err, tc.want, tc.from)
			}
		})
	}
}

// The connection limits fit the open-files limit: defaults are lowered
// (each to at least 4) to leave the reserve; totals given stay, and given
// ones that cannot fit stop the start.
func TestFitConnections(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	c := limitsConfig{}.withDefaults()
	if err := fitConnections(&c, true, 1<<20, logger); err != nil || c != (limitsConfig{}).withDefaults() || logs.Len() != 0 {
		t.Fatalf("under a high limit: %v %+v %s", err, c, logs.String())
	}
	c = limitsConfig{}.withDefaults()
	if err := fitConnections(&c, true, 256, logger); err != nil {
		t.Fatal(err)
	}
	// 256 − 64 reserved − 3 × 16 refusals = 144 for 8192 + 128 + 2 × 512.
	if c.public != (connlimit.Limits{Total: 126, PerAddress: 126}) || c.admin != (connlimit.Limits{Total: 4, PerAddress: 4}) || c.smtpSessions != 7 || c.smtpPerAddr != 7 {
		t.Errorf("lowered: %+v", c)
	}
	if !strings.Contains(logs.String(), `msg="connection limits lowered to fit the open-files limit" open_files=256 needed=9456`) {
		t.Errorf("log: %s", logs.String())
	}
	// 40 given: the admin listener's 128 is lowered to the 120 left.
	c = limitsConfig{public: connlimit.Limits{Total: 40, PerAddress: 20}, publicSet: true}.withDefaults()
	if err := fitConnections(&c, false, 256, logger); err != nil || c.public.Total != 40 || c.public.PerAddress != 20 || c.admin.Total != 120 {
		t.Errorf("given, fitting: %v %+v", err, c)
	}
	c = limitsConfig{public: connlimit.Limits{Total: 300}, publicSet: true}.withDefaults()
	err := fitConnections(&c, true, 256, logger)
	want := "the open-files limit (256) is too low for the connection limits, which need 1564 open files: raise it (ulimit -n, LimitNOFILE=) or lower --max-connections, --admin-max-connections and --smtp-max-sessions"
	if err == nil || err.Error() != want {
		t.Errorf("given, not fitting: %v, want %q", err, want)
	}
}

// The memory limit: --memory-limit sets it, off lifts it, GOMEMLIMIT wins
// over the flag; the start logs which.
func TestApplyMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	os.Unsetenv("GOMEMLIMIT") // t.Setenv below restores the variable
	for _, tc := range []struct {
		name  string
		c     limitsConfig
		env   string
		limit int64 // -1: as the test found it
		log   string
	}{
		{"flag", limitsConfig{memoryLimit: 3 << 30, memorySet: true}, "", 3 << 30, `msg="memory limit" limit=3GiB from=--memory-limit`},
		{"off", limitsConfig{memorySet: true}, "", noMemoryLimit, `msg="memory limit" limit=off from=--memory-limit`},
		{"share", limitsConfig{}, "", 0, `from="3/4 of `},
		{"GOMEMLIMIT", limitsConfig{memoryLimit: 3 << 30, memorySet: true}, "1GiB", -1, `from=GOMEMLIMIT flag_ignored=true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetMemoryLimit(before)
			if tc.env != "" {
				t.Setenv("GOMEMLIMIT", tc.env)
			}
			var logs bytes.Buffer
			applyMemoryLimit(&tc.c, slog.New(slog.NewTextHandler(&logs, nil)))
			got := debug.SetMemoryLimit(-1)
			switch {
			case tc.limit == -1 && got != before, tc.limit > 0 && got != tc.limit:
				t.Errorf("limit %d", got)
			case tc.limit == 0:
				total, _, err := memoryAvailable("/")
				if err != nil || got != total/4*3 {
					t.Errorf("limit %d, want 3/4 of %d (%v)", got, total, err)
				}
			}
			if !strings.Contains(logs.String(), tc.log) {
				t.Errorf("log %q, want %q in it", logs.String(), tc.log)
			}
		})
	}
}
