package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"backupmon/jsonx"
)

// field kinds of admin CLI flags, and how each becomes JSON.
const (
	kString = iota
	kInt
	kFloat
	kBool
	kList
	kPairs // key=value, the flag repeated: a JSON object of strings
)

// cliFlag maps one command-line flag to a body field (a dotted path for
// nested objects, e.g. "schedule.intervalMinutes").
type cliFlag struct {
	name, field, help string
	kind              int
}

// cliCommand is one admin API endpoint as a subcommand.
type cliCommand struct {
	group, verb, method, path, help string
	// ids are path parameters, given as flags: {wid} → --workspace etc.
	flags []cliFlag
	query []string // flags sent as query parameters
}

var idFlags = map[string]string{"{wid}": "workspace", "{cid}": "client", "{jid}": "job", "{kid}": "key", "{aid}": "alert",
	"{chid}": "channel", "{eid}": "escalation", "{uid}": "unparsed", "{userid}": "user", "{rid}": "rule"}

var workspaceFlags = []cliFlag{
	{"name", "name", "workspace name", kString},
	{"time-zone", "timeZone", "IANA time zone, e.g. Europe/Berlin", kString},
	{"plan", "plan", "starter, growth, pro or trial", kString},
	{"status", "status", "active, suspended or cancelled", kString},
	{"trial-ends-at", "trialEndsAt", "end of the trial (ISO 8601 with zone, or null)", kString},
}

var userFlags = []cliFlag{
	{"email", "email", "e-mail address, the login", kString},
	{"name", "name", "the user's name", kString},
	{"role", "role", "owner, admin, member or viewer", kString},
	{"password", "password", "password, 10 to 256 characters", kString},
}

var jobFlags = []cliFlag{
	{"name", "name", "job name", kString},
	{"vendor", "vendor", "backup product: veeam, acronis, datto, cove, synology, nakivo, backupexec, msp360, altaro, macrium, generic, custom (parsing rules only)", kString},
	{"device-name", "device.name", "device name", kString},
	{"device-type", "device.type", "server, workstation, vm, nas, cloud, database or other", kString},
	{"hostname", "device.hostname", "device hostname", kString},
	{"interval-minutes", "schedule.intervalMinutes", "minutes between runs (5..44640)", kInt},
	{"expected-days", "schedule.expectedDays", "comma-separated weekdays, e.g. mon,tue,wed,thu,fri", kList},
	{"grace-minutes", "schedule.graceMinutes", "minutes of grace before missing (0..10080)", kInt},
	{"sla-target", "slaTarget", "SLA target percentage (0..100)", kFloat},
}

var cliCommands = []cliCommand{
	{group: "workspace", verb: "create", method: "POST", path: "/workspaces", help: "create a workspace", flags: workspaceFlags},
	{group: "workspace", verb: "list", method: "GET", path: "/workspaces", help: "list workspaces"},
	{group: "workspace", verb: "get", method: "GET", path: "/workspaces/{wid}", help: "show a workspace"},
	{group: "workspace", verb: "update", method: "PATCH", path: "/workspaces/{wid}", help: "change a workspace", flags: workspaceFlags},
	{group: "client", verb: "create", method: "POST", path: "/workspaces/{wid}/clients", help: "create a client", flags: []cliFlag{
		{"name", "name", "client name", kString}, {"status", "status", "active, paused or archived", kString}}},
	{group: "client", verb: "list", method: "GET", path: "/workspaces/{wid}/clients", help: "list clients"},
	{group: "client", verb: "update", method: "PATCH", path: "/workspaces/{wid}/clients/{cid}", help: "rename, pause, archive or reactivate a client", flags: []cliFlag{
		{"name", "name", "client name", kString}, {"status", "status", "active, paused or archived", kString}}},
	{group: "job", verb: "create", method: "POST", path: "/workspaces/{wid}/jobs", help: "create a job", flags: append([]cliFlag{{"client-id", "clientId", "client the job belongs to", kString}}, jobFlags...)},
	{group: "job", verb: "list", method: "GET", path: "/workspaces/{wid}/jobs", help: "list jobs"},
	{group: "job", verb: "get", method: "GET", path: "/workspaces/{wid}/jobs/{jid}", help: "show a job with its history", flags: []cliFlag{{"limit", "limit", "history entries (1..1000, default 100)", kInt}}, query: []string{"limit"}},
	{group: "job", verb: "update", method: "PATCH", path: "/workspaces/{wid}/jobs/{jid}", help: "change, pause or resume a job", flags: append(append([]cliFlag{}, jobFlags...),
		cliFlag{"paused", "paused", "true pauses monitoring, false resumes it", kBool},
		cliFlag{"paused-until", "pausedUntil", "pause until this time (ISO 8601 with zone)", kString})},
	{group: "job", verb: "delete", method: "DELETE", path: "/workspaces/{wid}/jobs/{jid}", help: "delete a job with its results and alerts"},
	{group: "key", verb: "create", method: "POST", path: "/workspaces/{wid}/keys", help: "create an API key (the secret is shown once)", flags: []cliFlag{
		{"name", "name", "key name", kString},
		{"type", "type", "rest, report or assistant", kString},
		{"scopes", "scopes", "rest keys: comma-separated scopes, e.g. jobs:read,alerts:read", kList},
		{"expires-at", "expiresAt", "expiry (ISO 8601 with zone); default never", kString},
		{"access", "access", "assistant keys: read-only or read-write", kString}}},
	{group: "key", verb: "list", method: "GET", path: "/workspaces/{wid}/keys", help: "list keys (no secrets)"},
	{group: "key", verb: "revoke", method: "DELETE", path: "/workspaces/{wid}/keys/{kid}", help: "revoke a key"},
	{group: "alert", verb: "list", method: "GET", path: "/workspaces/{wid}/alerts", help: "list alerts, newest first"},
	{group: "alert", verb: "acknowledge", method: "POST", path: "/workspaces/{wid}/alerts/{aid}/acknowledge", help: "acknowledge an alert", flags: []cliFlag{{"note", "note", "note for the activity log", kString}}},
	{group: "alert", verb: "snooze", method: "POST", path: "/workspaces/{wid}/alerts/{aid}/snooze", help: "snooze an alert", flags: []cliFlag{
		{"until", "until", "snooze until (ISO 8601 with zone)", kString}, {"note", "note", "note for the activity log", kString}}},
	{group: "alert", verb: "resolve", method: "POST", path: "/workspaces/{wid}/alerts/{aid}/resolve", help: "resolve an alert", flags: []cliFlag{{"note", "note", "note for the activity log", kString}}},
	{group: "channel", verb: "create", method: "POST", path: "/workspaces/{wid}/channels", help: "create a notification channel (a webhook's secret is shown once)", flags: []cliFlag{
		{"type", "type", "webhook, slack, email, connectwise, autotask, halopsa, teams or pagerduty", kString},
		{"name", "name", "channel name", kString},
		{"url", "url", "webhook and slack: the http(s) URL to POST to", kString},
		{"to", "to", "email: the recipient address", kString},
		{"min-severity", "minSeverity", "warning (default) or critical", kString},
		{"setting", "settings", "connectwise, autotask, halopsa, pagerduty: a setting as key=value (repeat the flag), e.g. board=Service Desk", kPairs},
		{"secret", "secrets", "a secret as key=value (repeat the flag), e.g. privateKey=...; never shown again", kPairs}}},
	{group: "channel", verb: "test", method: "POST", path: "/workspaces/{wid}/channels/{chid}/test", help: "send a channel a test now and show what it answered"},
	{group: "channel", verb: "clients", method: "GET", path: "/workspaces/{wid}/channels/{chid}/clients", help: "list every client with its company in a PSA channel (mapped false: the default)"},
	{group: "channel", verb: "map", method: "PUT", path: "/workspaces/{wid}/channels/{chid}/clients/{cid}", help: "send a client's tickets to a PSA company", flags: []cliFlag{
		{"company", "company", "the company: ConnectWise identifier, Autotask or HaloPSA id", kString},
		{"board", "board", "ConnectWise board name or Autotask queue id (default: the channel's)", kString},
		{"ticket-type", "ticketType", "ticket type (default: the channel's)", kString}}},
	{group: "channel", verb: "unmap", method: "DELETE", path: "/workspaces/{wid}/channels/{chid}/clients/{cid}", help: "send a client's tickets to the channel's default company"},
	{group: "channel", verb: "list", method: "GET", path: "/workspaces/{wid}/channels", help: "list notification channels (no secrets)"},
	{group: "channel", verb: "delete", method: "DELETE", path: "/workspaces/{wid}/channels/{chid}", help: "delete a channel, its escalations and pending deliveries"},
	{group: "escalation", verb: "create", method: "POST", path: "/workspaces/{wid}/escalations", help: "notify a channel of alerts still open after some minutes", flags: []cliFlag{
		{"channel-id", "channelId", "channel to notify", kString},
		{"after-minutes", "afterMinutes", "minutes after the alert opened (1..43200)", kInt}}},
	{group: "escalation", verb: "list", method: "GET", path: "/workspaces/{wid}/escalations", help: "list escalation rules"},
	{group: "escalation", verb: "delete", method: "DELETE", path: "/workspaces/{wid}/escalations/{eid}", help: "delete an escalation rule"},
	{group: "job", verb: "rotate-ingest-address", method: "POST", path: "/workspaces/{wid}/jobs/{jid}/ingest-address/rotate", help: "give a job a new ingest address; the old one is refused from now on"},
	{group: "unparsed", verb: "list", method: "GET", path: "/workspaces/{wid}/unparsed", help: "list report e-mails that could not be read, newest first, with the reason"},
	{group: "unparsed", verb: "reparse", method: "POST", path: "/workspaces/{wid}/unparsed/{uid}/reparse", help: "read an unparsed e-mail again with its job's parser"},
	{group: "unparsed", verb: "delete", method: "DELETE", path: "/workspaces/{wid}/unparsed/{uid}", help: "drop an unparsed e-mail and its kept copy"},
	{group: "rule", verb: "list", method: "GET", path: "/workspaces/{wid}/parsing-rules", help: "list the workspace's parsing rules in their order"},
	{group: "rule", verb: "create", method: "POST", path: "/workspaces/{wid}/parsing-rules", help: "add a parsing rule (last): --body '<rule JSON>' (README: parsing rules)"},
	{group: "rule", verb: "get", method: "GET", path: "/workspaces/{wid}/parsing-rules/{rid}", help: "show a parsing rule"},
	{group: "rule", verb: "update", method: "PUT", path: "/workspaces/{wid}/parsing-rules/{rid}", help: "replace a parsing rule: --body '<rule JSON>'"},
	{group: "rule", verb: "delete", method: "DELETE", path: "/workspaces/{wid}/parsing-rules/{rid}", help: "delete a parsing rule"},
	{group: "rule", verb: "order", method: "PUT", path: "/workspaces/{wid}/parsing-rules", help: "put the parsing rules in order", flags: []cliFlag{{"ids", "ids", "comma-separated rule ids, first tried first", kList}}},
	{group: "rule", verb: "try", method: "POST", path: "/workspaces/{wid}/parsing-rules/try", help: "try a rule on a mail: --body '{\"rule\": {...}, \"unparsedId\": \"...\"}' (or \"mail\": the pasted mail)"},
	{group: "rule", verb: "reread", method: "POST", path: "/workspaces/{wid}/parsing-rules/{rid}/reread", help: "read again every unparsed e-mail the rule matches"},
	{group: "ai-prompt", verb: "get", method: "GET", path: "/workspaces/{wid}/ai-prompt", help: "show the prompt the model is given for failure suggestions"},
	{group: "ai-prompt", verb: "set", method: "PUT", path: "/workspaces/{wid}/ai-prompt", help: "set the model's prompt (--prompt '' for the default)", flags: []cliFlag{{"prompt", "prompt", "the system prompt", kString}}},
	{group: "user", verb: "create", method: "POST", path: "/workspaces/{wid}/users", help: "add a dashboard user", flags: userFlags},
	{group: "user", verb: "list", method: "GET", path: "/workspaces/{wid}/users", help: "list the dashboard users (never a password)"},
	{group: "user", verb: "get", method: "GET", path: "/workspaces/{wid}/users/{userid}", help: "show a dashboard user"},
	{group: "user", verb: "update", method: "PATCH", path: "/workspaces/{wid}/users/{userid}", help: "change a user's e-mail, name, role or password (a new password ends their sessions)", flags: userFlags},
	{group: "user", verb: "delete", method: "DELETE", path: "/workspaces/{wid}/users/{userid}", help: "delete a user and end their sessions"},
	{group: "delivery", verb: "list", method: "GET", path: "/workspaces/{wid}/deliveries", help: "list notification deliveries, newest first"},
	{group: "activity", verb: "list", method: "GET", path: "/workspaces/{wid}/activity", help: "show the activity log, newest first"},
	{group: "clock", verb: "set", method: "POST", path: "/clock", help: "development clock: set and/or advance (server needs --dev-clock)", flags: []cliFlag{
		{"set", "set", "set the clock to this time (ISO 8601 with zone)", kString},
		{"advance-seconds", "advanceSeconds", "move the clock forward by this many seconds", kInt}}},
	{group: "cluster", verb: "status", method: "GET", path: "/cluster", help: "cluster mode: the nodes, and each shard's owner (`backupmon admin cluster` for short; --json for the answer as is)"},
}

func adminUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: backupmon admin <group> <verb> [flags]")
	fmt.Fprintln(w, "Common flags: --admin-url (default http://127.0.0.1:8081, env BACKUPMON_ADMIN_URL),")
	fmt.Fprintln(w, "  --admin-token (default env BACKUPMON_ADMIN_TOKEN, else ./data/admin.token), --body '<json>' (send this body as is)")
	fmt.Fprintln(w, "Commands, each with its flags ([optional]; backupmon admin help <group> <verb> says what each means):")
	width := 0
	for _, c := range cliCommands {
		width = max(width, len(c.group)+1+len(c.verb))
	}
	for i := range cliCommands {
		c := &cliCommands[i]
		fmt.Fprintf(w, "  %-*s %s\n", width, c.group+" "+c.verb, c.help)
		if f := commandFlags(c); f != "" {
			fmt.Fprintf(w, "  %-*s   %s\n", width, "", f)
		}
	}
	fmt.Fprintf(w, "  %-*s %s\n", width, "backup", "write a backup of every workspace to a file, kept once it reads back whole (backupmon restore makes a data directory of it)")
	fmt.Fprintf(w, "  %-*s   %s\n", width, "", "--out FILE")
}

// adminCLI runs one admin subcommand and prints the JSON answer. It returns
// the process exit code: 0 on a 2xx answer, 1 on an error answer or a failed
// call, 2 on a usage error.
func adminCLI(args []string, stdout, stderr io.Writer) int {
	if len(args) >= 1 && args[0] == "cluster" && (len(args) == 1 || strings.HasPrefix(args[1], "-")) {
		args = append([]string{"cluster", "status"}, args[1:]...)
	}
	if len(args) >= 1 && args[0] == "backup" {
		return adminBackup(args[1:], stdout, stderr)
	}
	if len(args) == 0 {
		adminUsage(stderr)
		return 2
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		return adminHelp(args[1:], stdout, stderr)
	}
	if len(args) < 2 {
		unknownCommand(stderr, args[:1])
		return 2
	}
	cmd := findCommand(args[0], args[1])
	if cmd == nil {
		unknownCommand(stderr, args[:2])
		return 2
	}
	fs := flag.NewFlagSet("admin "+cmd.group+" "+cmd.verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	adminURL := fs.String("admin-url", envDefault("admin-url", "http://127.0.0.1:8081"), "admin API address")
	token := fs.String("admin-token", os.Getenv("BACKUPMON_ADMIN_TOKEN"), "admin token (default: ./data/admin.token)")
	rawBody := fs.String("body", "", "JSON body to send as is (instead of field flags)")
	asJSON := cmd.group != "cluster"
	if !asJSON {
		fs.BoolVar(&asJSON, "json", false, "print the JSON answer rather than tables")
	}
	ids := map[string]*string{}
	for _, p := range strings.Split(cmd.path, "/") {
		if f, ok := idFlags[p]; ok {
			ids[p] = fs.String(f, "", f+" id (required)")
		}
	}
	values := map[string]*string{}
	for _, f := range cmd.flags {
		v := new(string)
		values[f.name] = v
		if f.kind == kPairs {
			fs.Var(pairsFlag{v}, f.name, flagHelp(cmd, f))
		} else {
			fs.StringVar(v, f.name, "", flagHelp(cmd, f))
		}
	}
	if err := fs.Parse(args[2:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "backupmon admin: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	path := cmd.path
	for p, v := range ids {
		if *v == "" {
			fmt.Fprintf(stderr, "backupmon admin %s %s: --%s is required\n", cmd.group, cmd.verb, idFlags[p])
			return 2
		}
		path = strings.Replace(path, p, url.PathEscape(*v), 1)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	body := map[string]any{}
	query := url.Values{}
	for _, f := range cmd.flags {
		if !set[f.name] {
			continue
		}
		raw := foldWord(f, *values[f.name])
		if slices.Contains(cmd.query, f.name) {
			query.Set(f.field, raw)
			continue
		}
		v, err := cliValue(f, raw)
		if err != nil {
			fmt.Fprintf(stderr, "backupmon admin: --%s: %v\n", f.name, err)
			return 2
		}
		setPath(body, f.field, v)
	}
	var reqBody io.Reader
	if *rawBody != "" {
		if !jsonx.Valid([]byte(*rawBody)) {
			fmt.Fprintln(stderr, "backupmon admin: --body is not valid JSON")
			return 2
		}
		reqBody = strings.NewReader(*rawBody)
	} else if cmd.method == "POST" || cmd.method == "PATCH" || cmd.method == "PUT" {
		b, _ := jsonx.Marshal(body)
		reqBody = bytes.NewReader(b)
	}
	tok, err := adminTokenOr(*token)
	if err != nil {
		fmt.Fprintln(stderr, "backupmon admin:", err)
		return 2
	}
	target := strings.TrimRight(*adminURL, "/") + "/admin/v1" + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	req, err := http.NewRequest(cmd.method, target, reqBody)
	if err != nil {
		fmt.Fprintln(stderr, "backupmon admin:", err)
		return 2
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if reqBody != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{Timeout: 60 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintln(stderr, "backupmon admin:", err)
		return 1
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		fmt.Fprintln(stderr, "backupmon admin: read answer:", err)
		return 1
	}
	switch {
	case !asJSON && resp.StatusCode == http.StatusOK:
		if err := printCluster(stdout, out); err != nil {
			fmt.Fprintln(stderr, "backupmon admin:", err)
			return 1
		}
	case len(out) > 0:
		fmt.Fprintln(stdout, string(jsonx.Pretty(out)))
	}
	if resp.StatusCode >= 300 {
		fmt.Fprintf(stderr, "backupmon admin: %s\n", resp.Status)
		return 1
	}
	return 0
}

// cliValue turns a flag's text into the JSON value its field takes; the
// word null sends null.
func cliValue(f cliFlag, raw string) (any, error) {
	if raw == "null" {
		return nil, nil
	}
	switch f.kind {
	case kInt:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return nil, errors.New("not an integer")
		}
		return n, nil
	case kFloat:
		n, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return nil, errors.New("not a number")
		}
		return n, nil
	case kBool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, errors.New("not true or false")
		}
		return b, nil
	case kPairs:
		m := map[string]string{}
		for _, line := range strings.Split(strings.TrimPrefix(raw, "\n"), "\n") {
			k, v, ok := strings.Cut(line, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("%q is not key=value", line)
			}
			m[k] = v
		}
		return m, nil
	case kList:
		list := []string{}
		for _, s := range strings.Split(raw, ",") {
			if s = strings.TrimSpace(s); s != "" {
				list = append(list, s)
			}
		}
		return list, nil
	}
	return raw, nil
}

// setPath sets body[a][b]... = v for a dotted path.
func setPath(body map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	m := body
	for _, p := range parts[:len(parts)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[p] = sub
		}
		m = sub
	}
	m[parts[len(parts)-1]] = v
}

// printCluster prints GET /admin/v1/cluster's answer as two tables: the
// live nodes with the shards each owns, and each shard with its owner.
func printCluster(w io.Writer, answer []byte) error {
	var env struct {
		Data struct {
			Cluster  string
			Node     string
			Shards   int
			Replicas int
			Nodes    []struct {
				ID       string
				LastBeat string
				Peer     string
				Shards   []int
			}
			Owners []struct {
				Shard   int
				State   string
				Owner   string
				Epoch   uint64
				Problem string
			}
		}
	}
	if err := jsonx.Unmarshal(answer, &env); err != nil {
		return fmt.Errorf("the cluster's answer: %w", err)
	}
	d := env.Data
	fmt.Fprintf(w, "cluster %s: %d shards, %d copies of each shard's log; as node %s sees it\n\n", d.Cluster, d.Shards, d.Replicas, d.Node)
	fmt.Fprintf(w, "%-16s %-26s %-22s %s\n", "NODE", "LAST HEARTBEAT", "PEER", "SHARDS")
	for _, n := range d.Nodes {
		list := make([]string, len(n.Shards))
		for i, s := range n.Shards {
			list[i] = strconv.Itoa(s)
		}
		peer := n.Peer
		if peer == "" {
			peer = "-" // forwarded to over NATS only
		}
		fmt.Fprintf(w, "%-16s %-26s %-22s %s\n", n.ID, n.LastBeat, peer, strings.Join(list, ","))
	}
	fmt.Fprintf(w, "\n%-6s %-8s %-16s %s\n", "SHARD", "STATE", "OWNER", "EPOCH")
	for _, o := range d.Owners {
		epoch := ""
		if o.Epoch > 0 {
			epoch = strconv.FormatUint(o.Epoch, 10)
		}
		fmt.Fprintf(w, "%-6d %-8s %-16s %s\n", o.Shard, o.State, o.Owner, epoch)
		if o.Problem != "" {
			fmt.Fprintf(w, "       problem: %s\n", o.Problem)
		}
	}
	return nil
}

// pairsFlag is a flag that may be repeated: each value is kept on a line
// of its own (a kPairs flag's key=value).
type pairsFlag struct{ s *string }

func (p pairsFlag) String() string {
	if p.s == nil {
		return ""
	}
	return *p.s
}

func (p pairsFlag) Set(v string) error {
	if strings.Contains(v, "\n") {
		return errors.New("a value must be one line")
	}
	*p.s += "\n" + v
	return nil
}
