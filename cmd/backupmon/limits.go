package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"backupmon/smtpin"
	"backupmon/transport"
	"backupmon/transport/connlimit"
)

// limitsConfig holds the serve flags that bound connections, sessions,
// read times and memory (decisions.md: connection limits, SMTP bounds,
// memory limit). Its zero value is every default.
type limitsConfig struct {
	public, admin                connlimit.Limits
	smtpSessions, smtpPerAddr    int
	smtpLifetime                 time.Duration
	smtpMemory                   int64
	readTimeout, smtpTimeout     time.Duration
	memoryLimit                  int64 // bytes; 0: none (with memorySet)
	memorySet                    bool  // --memory-limit was given: else a share of the memory there is
	publicSet, adminSet, smtpSet bool  // a total was given, not to be lowered to fit the open-files limit
}

// limitFlags are the raw values of the limit flags, read once the flags
// are parsed.
type limitFlags map[string]*string

// Defaults of the limit flags, as the flags' text shows them.
var limitDefaults = []struct{ name, def, usage string }{
	{"max-connections", strconv.Itoa(transport.DefaultPublicConns), "connections the public listener serves at once; more are answered 503 at once"},
	{"max-connections-per-address", strconv.Itoa(transport.DefaultPublicConnsPerAddress), "connections the public listener serves at once from one client address (IPv6: one /64)"},
	{"admin-max-connections", strconv.Itoa(transport.DefaultAdminConns), "connections the admin listener serves at once"},
	{"admin-max-connections-per-address", strconv.Itoa(transport.DefaultAdminConnsPerAddress), "connections the admin listener serves at once from one client address"},
	{"smtp-max-sessions", strconv.Itoa(smtpin.DefaultMaxSessions), "SMTP sessions served at once; more are answered 421 at once"},
	{"smtp-max-sessions-per-address", strconv.Itoa(smtpin.DefaultMaxSessionsPerAddress), "SMTP sessions served at once from one client address (IPv6: one /64)"},
	{"smtp-session-lifetime", (smtpin.DefaultSessionLifetime).String(), "longest SMTP session, busy or idle"},
	{"smtp-message-memory", formatSize(smtpin.DefaultMessageMemory), "memory for the e-mails being received at once; past it a message is refused 452 4.3.1 (the sender retries)"},
	{"read-timeout", "15s", "longest time to read one HTTP request, header and body, on both HTTP listeners (408 past it)"},
	{"smtp-read-timeout", "2m0s", "longest time to read one SMTP command or message, or to write one answer"},
	{"memory-limit", "", "the Go runtime's memory limit, e.g. 4GiB or 512MiB; 0 or off for none (default: 3/4 of the cgroup's or the machine's memory; GOMEMLIMIT, when set, wins)"},
}

// addLimitFlags defines the limit flags on fs, each defaulting to its
// BACKUPMON_* variable; parse reads them once fs is parsed.
func addLimitFlags(fs *flag.FlagSet) limitFlags {
	raw := limitFlags{}
	for _, d := range limitDefaults {
		v := new(string)
		*v = envDefault(d.name, "")
		raw[d.name] = v
		usage := d.usage
		if d.def != "" {
			usage += " (default " + d.def + ")"
		}
		fs.Func(d.name, usage, func(s string) error { *v = s; return nil })
	}
	return raw
}

// parse checks the limit flags' values; the error names the flag and the
// value.
func (raw limitFlags) parse() (limitsConfig, error) {
	var c limitsConfig
	count := func(name string, dst *int, set *bool) error {
		s := *raw[name]
		if s == "" {
			return nil
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("--%s must be a positive integer, not %q", name, s)
		}
		*dst = n
		if set != nil {
			*set = true
		}
		return nil
	}
	duration := func(name string, dst *time.Duration) error {
		s := *raw[name]
		if s == "" {
			return nil
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return fmt.Errorf("--%s must be a duration such as 30s or 5m, not %q", name, s)
		}
		*dst = d
		return nil
	}
	for _, err := range []error{
		count("max-connections", &c.public.Total, &c.publicSet),
		count("max-connections-per-address", &c.public.PerAddress, nil),
		count("admin-max-connections", &c.admin.Total, &c.adminSet),
		count("admin-max-connections-per-address", &c.admin.PerAddress, nil),
		count("smtp-max-sessions", &c.smtpSessions, &c.smtpSet),
		count("smtp-max-sessions-per-address", &c.smtpPerAddr, nil),
		duration("smtp-session-lifetime", &c.smtpLifetime),
		duration("read-timeout", &c.readTimeout),
		duration("smtp-read-timeout", &c.smtpTimeout),
	} {
		if err != nil {
			return c, err
		}
	}
	if s := *raw["smtp-message-memory"]; s != "" {
		n, err := parseSize(s)
		if err != nil || n == 0 {
			return c, fmt.Errorf("--smtp-message-memory must be a size such as 256MiB, not %q", s)
		}
		sessions := c.smtpSessions
		if sessions == 0 {
			sessions = smtpin.DefaultMaxSessions
		}
		if least := smtpin.MinMessageMemory(sessions); n < least {
			return c, fmt.Errorf("--smtp-message-memory must be at least %s with %d SMTP sessions (a message of 10 MiB beside each session's share), not %q", formatSizeUp(least), sessions, s)
		}
		c.smtpMemory = n
	}
	if s := *raw["memory-limit"]; s != "" {
		c.memorySet = true
		if s != "off" {
			n, err := parseSize(s)
			if err != nil {
				return c, fmt.Errorf("--memory-limit must be a size such as 4GiB or 512MiB, or off, not %q", s)
			}
			c.memoryLimit = n
		}
	}
	return c, nil
}

// withDefaults returns c with the defaults in its zero fields, and no
// per-address limit above its total.
func (c limitsConfig) withDefaults() limitsConfig {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.public.Total, transport.DefaultPublicConns)
	def(&c.public.PerAddress, transport.DefaultPublicConnsPerAddress)
	def(&c.admin.Total, transport.DefaultAdminConns)
	def(&c.admin.PerAddress, transport.DefaultAdminConnsPerAddress)
	def(&c.smtpSessions, smtpin.DefaultMaxSessions)
	def(&c.smtpPerAddr, smtpin.DefaultMaxSessionsPerAddress)
	c.public.PerAddress = min(c.public.PerAddress, c.public.Total)
	c.admin.PerAddress = min(c.admin.PerAddress, c.admin.Total)
	c.smtpPerAddr = min(c.smtpPerAddr, c.smtpSessions)
	return c
}

// Open files kept for what is not a connection: the log's segments, the
// snapshots, the mail store's files (counted apart, one per SMTP session),
// notifications' connections, the process's own.
const fileReserve = 64

// minFitted is the least a defaulted total is lowered to.
const minFitted = 4

// applyRuntimeLimits raises the open-files limit to its hard limit, fits
// the connection limits under it (lowering the defaults that do not fit;
// a limit given that does not fit is an error), sets the memory limit, and
// logs what it chose. smtp says whether the SMTP listener is on.
func applyRuntimeLimits(c *limitsConfig, smtp bool, logger *slog.Logger) error {
	*c = c.withDefaults()
	files, err := raiseOpenFiles()
	if err != nil {
		logger.Warn("open files limit unknown: connection limits not checked against it", "err", err)
	} else {
		logger.Info("open files limit", "limit", files)
		if err := fitConnections(c, smtp, files, logger); err != nil {
			return err
		}
	}
	logger.Info("connection limits",
		"public", c.public.Total, "public_per_address", c.public.PerAddress,
		"admin", c.admin.Total, "admin_per_address", c.admin.PerAddress,
		"smtp_sessions", c.smtpSessions, "smtp_sessions_per_address", c.smtpPerAddr)
	applyMemoryLimit(c, logger)
	return nil
}

// raiseOpenFiles sets the soft open-files limit to the hard one (the Go
// runtime does so at start too) and returns it.
func raiseOpenFiles() (uint64, error) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, fmt.Errorf("getrlimit: %w", err)
	}
	if r.Cur < r.Max {
		r.Cur = r.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
			syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r)
		}
	}
	return r.Cur, nil
}

// fitConnections keeps every listener's connections, with their refusals
// in progress and fileReserve, under the open-files limit: the totals
// given by flags stay, the defaulted ones are lowered in proportion to fit
// what is left (and their per-address limits with them).
func fitConnections(c *limitsConfig, smtp bool, files uint64, logger *slog.Logger) error {
	smtpFiles := 0 // a session may hold a mail store file too
	listeners := 2
	if smtp {
		smtpFiles = 2 * c.smtpSessions
		listeners = 3
	}
	reserve := fileReserve + listeners*connlimit.MaxRefusing
	need := c.public.Total + c.admin.Total + smtpFiles + reserve
	if uint64(need) <= files {
		return nil
	}
	given, defaulted := reserve, 0
	type entry struct {
		set    bool
		total  *int
		per    *int
		weight int // open files per connection
	}
	entries := []entry{{c.publicSet, &c.public.Total, &c.public.PerAddress, 1}, {c.adminSet, &c.admin.Total, &c.admin.PerAddress, 1}}
	if smtp {
		entries = append(entries, entry{c.smtpSet, &c.smtpSessions, &c.smtpPerAddr, 2})
	}
	for _, e := range entries {
		if e.set {
			given += *e.total * e.weight
		} else {
			defaulted += *e.total * e.weight
		}
	}
	left := int(min(files, 1<<30)) - given
	tooLow := fmt.Errorf("the open-files limit (%d) is too low for the connection limits, which need %d open files: raise it (ulimit -n, LimitNOFILE=) or lower --max-connections, --admin-max-connections and --smtp-max-sessions", files, need)
	if defaulted == 0 {
		return tooLow
	}
	used := 0
	for _, e := range entries {
		if !e.set {
			*e.total = max(minFitted, *e.total*left/defaulted)
			*e.per = min(*e.per, *e.total)
			used += *e.total * e.weight
		}
	}
	if used > left {
		return tooLow
	}
	logger.Warn("connection limits lowered to fit the open-files limit", "open_files", files, "needed", need)
	return nil
}

// applyMemoryLimit sets the Go runtime's memory limit: GOMEMLIMIT when
// set (the runtime applied it already), else --memory-limit, else 3/4 of
// the memory the cgroup or the machine has; and logs it.
func applyMemoryLimit(c *limitsConfig, logger *slog.Logger) {
	if v, ok := os.LookupEnv("GOMEMLIMIT"); ok && v != "" {
		logger.Info("memory limit", "limit", formatSize(debug.SetMemoryLimit(-1)), "from", "GOMEMLIMIT", "flag_ignored", c.memorySet)
		return
	}
	if c.memorySet {
		if c.memoryLimit == 0 {
			debug.SetMemoryLimit(noMemoryLimit)
			logger.Info("memory limit", "limit", "off", "from", "--memory-limit")
			return
		}
		debug.SetMemoryLimit(c.memoryLimit)
		logger.Info("memory limit", "limit", formatSize(c.memoryLimit), "from", "--memory-limit")
		return
	}
	total, from, err := memoryAvailable("/")
	if err != nil {
		logger.Warn("memory limit off: the memory available is unknown", "err", err)
		return
	}
	limit := total / 4 * 3
	debug.SetMemoryLimit(limit)
	logger.Info("memory limit", "limit", formatSize(limit), "from", "3/4 of "+from, "memory", formatSize(total))
}

// noMemoryLimit is the runtime's "no limit" (math.MaxInt64).
const noMemoryLimit = 1<<63 - 1

var errNoMemoryInfo = errors.New("no cgroup memory limit and no MemTotal in /proc/meminfo")
