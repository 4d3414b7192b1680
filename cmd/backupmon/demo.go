package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"backupmon/engine"
	"backupmon/jsonx"
	"backupmon/password"
	"backupmon/transport"
	"backupmon/wal"
)

func walOptions(logger *slog.Logger, m *transport.Metrics) wal.Options {
	return wal.Options{Logger: logger, Observe: m.ObserveWAL}
}

// demoJob describes one job of the demo workspace.
type demoJob struct {
	client, name, vendor, device, devType, host string
	// history gives the last 14 days' results, oldest first, one letter a
	// day: o ok, w warning, f failed, - no report.
	history string
}

// The demo (decisions.md 9): three clients, twelve jobs across vendors,
// 14 days of results, one open failed alert and one missing job.
var demoJobs = []demoJob{
	{"Northwind Traders", "Nightly file server", "veeam", "File server", "server", "nw-fs01", "oooooooooooooo"},
	{"Northwind Traders", "SQL databases", "veeam", "SQL server", "database", "nw-sql01", "ooooowoooooooo"},
	{"Northwind Traders", "Finance laptops", "acronis", "Finance laptop", "workstation", "nw-fin-lt07", "oooooooofooooo"},
	{"Northwind Traders", "Office NAS", "synology", "Office NAS", "nas", "nw-nas01", "oooooooooooooo"},
	{"Contoso Dental", "Practice server image", "datto", "Practice server", "server", "cd-srv01", "ooooooooooooof"},
	{"Contoso Dental", "Imaging VM", "nakivo", "Imaging VM", "vm", "cd-img-vm", "oooowooooooooo"},
	{"Contoso Dental", "Reception PCs", "cove", "Reception PC", "workstation", "cd-rec-pc2", "oooooooooooooo"},
	{"Contoso Dental", "Cloud mailboxes", "msp360", "Microsoft 365", "cloud", "contoso-dental.onmicrosoft.com", "ooooooooooo---"},
	{"Fabrikam Legal", "Document archive", "backupexec", "Archive server", "server", "fl-arch01", "oooooofooooooo"},
	{"Fabrikam Legal", "Hyper-V hosts", "altaro", "Hyper-V host", "server", "fl-hv01", "oooooooooooooo"},
	{"Fabrikam Legal", "Partner workstations", "macrium", "Partner workstation", "workstation", "fl-ws-partner1", "ooowoooooooooo"},
	{"Fabrikam Legal", "Case database dump", "generic", "Case database", "database", "fl-db01", "oooooooooooooo"},
}

// createDemo builds the demo workspace through the engine's commands and
// writes its keys to <data>/demo-keys.txt.
func createDemo(eng *engine.Engine, hasher *password.Hasher, dataDir string, logger *slog.Logger) error {
	ws, err := eng.CreateWorkspace(engine.WorkspaceInput{Name: engine.Some("Demo MSP"), Plan: engine.Some("pro"), TimeZone: engine.Some("Europe/London")})
	if err != nil {
		return err
	}
	clients := map[string]string{}
	jobIDs := make([]string, len(demoJobs))
	for i, d := range demoJobs {
		if clients[d.client] == "" {
			c, err := eng.CreateClient(ws.ID, engine.ClientInput{Name: engine.Some(d.client)})
			if err != nil {
				return err
			}
			clients[d.client] = c.ID
		}
		j, err := eng.CreateJob(ws.ID, engine.JobInput{
			ClientID: engine.Some(clients[d.client]), Name: engine.Some(d.name), Vendor: engine.Some(d.vendor),
			Device:   engine.Some(engine.DeviceInput{Name: engine.Some(d.device), Type: engine.Some(d.devType), Hostname: engine.Some(d.host)}),
			Schedule: engine.Some(engine.ScheduleInput{IntervalMinutes: engine.Some(int64(1440)), GraceMinutes: engine.Some(int64(120))}),
		})
		if err != nil {
			return err
		}
		jobIDs[i] = j.ID
	}
	// Results arrive at 01:30 UTC plus a few minutes per job, one a day, for
	// the 14 days before now; the last day is today if 01:30 has passed.
	now := eng.Now().UTC()
	last := time.Date(now.Year(), now.Month(), now.Day(), 1, 30, 0, 0, time.UTC)
	// The last job of the day reports 7 minutes per job after 01:30; all of
	// them must lie in the past.
	if !last.Add(time.Duration(7*len(demoJobs)) * time.Minute).Before(now) {
		last = last.AddDate(0, 0, -1)
	}
	// Each job's history goes in with one call, oldest first: the engine
	// runs its timers after each call at the current time, so a history
	// sent day by day would find each job overdue between two of its days
	// and open missing alerts that never were.
	history := make([][]engine.ImportInput, len(demoJobs))
	for day := 0; day < 14; day++ {
		at := last.AddDate(0, 0, day-13)
		for i, d := range demoJobs {
			var status uint8
			switch d.history[day] {
			case 'o':
				status = engine.ReportOK
			case 'w':
				status = engine.ReportWarn
			case 'f':
				status = engine.ReportFailed
			default:
				continue
			}
			received := at.Add(time.Duration(i*7) * time.Minute)
			duration := int64(600 + 137*i + 31*day)
			size := int64(1+i) * (40 << 30) / 10
			history[i] = append(history[i], engine.ImportInput{
				ReceivedAt: received, Status: status, DurationSeconds: duration, SizeBytes: size,
				Source: "api:demo",
			})
		}
	}
	for i, list := range history {
		if err := eng.ImportReports(ws.ID, jobIDs[i], list); err != nil {
			return err
		}
	}
	rest, err := eng.CreateKey(ws.ID, engine.KeyInput{Name: engine.Some("Demo REST key"), Type: engine.Some("rest")})
	if err != nil {
		return err
	}
	report, err := eng.CreateKey(ws.ID, engine.KeyInput{Name: engine.Some("Demo report key"), Type: engine.Some("report")})
	if err != nil {
		return err
	}
	// A read-write assistant key, kept alone in a file too, for
	// `backupmon mcp --key-file` (decisions.md 12).
	asst, err := eng.CreateKey(ws.ID, engine.KeyInput{Name: engine.Some("Demo assistant key"), Type: engine.Some("assistant"),
		Access: engine.Some("read-write")})
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dataDir, demoAssistantFile), []byte(asst.Key+"\n"), 0o600); err != nil {
		return fmt.Errorf("write demo assistant key: %w", err)
	}
	// The owner of the demo (decisions.md 11), with a random password.
	pwBytes := make([]byte, 12)
	if _, err := rand.Read(pwBytes); err != nil {
		return err
	}
	pw := base64.RawURLEncoding.EncodeToString(pwBytes)
	hash, err := hasher.Hash(context.Background(), pw)
	if err != nil {
		return err
	}
	if _, err := eng.CreateUser(ws.ID, engine.UserInput{Email: engine.Some(demoOwner), Name: engine.Some("Demo Owner"),
		Role: engine.Some(engine.RoleOwner), Hash: engine.Some(hash)}); err != nil {
		return err
	}
	var mailJob struct {
		Name          string `json:"name"`
		IngestAddress string `json:"ingestAddress"`
	}
	if v, err := eng.JobDetail(ws.ID, jobIDs[demoMailJob], 0); err == nil {
		jsonx.Unmarshal(v.JSON, &mailJob)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "workspace=%s\nrest_key=%s\nreport_key=%s\nassistant_key=%s\njob=%s\nfailed_job=%s\nmail_job=%s\nmail_job_name=%s\nmail_address=%s\nowner=%s\nowner_password=%s\n",
		ws.ID, rest.Key, report.Key, asst.Key, jobIDs[0], jobIDs[4], jobIDs[demoMailJob], mailJob.Name, mailJob.IngestAddress, demoOwner, pw)
	if err := writeFileAtomic(filepath.Join(dataDir, "demo-keys.txt"), []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write demo keys: %w", err)
	}
	logger.Info("demo workspace created", "workspace", ws.ID, "jobs", len(jobIDs))
	return nil
}

// demoAssistantFile holds the demo's assistant key alone, in the data
// directory.
const demoAssistantFile = "demo-assistant.key"

// demoOwner is the demo workspace's owner.
const demoOwner = "owner@demo.test"

// completeDemoKeys adds the mail job's name and ingest address to a
// demo-keys.txt written before they were kept there, from eng.
func completeDemoKeys(eng *engine.Engine, dataDir string) error {
	path := filepath.Join(dataDir, "demo-keys.txt")
	raw, err := os.ReadFile(path)
	if err != nil || strings.Contains(string(raw), "\nmail_address=") {
		return nil
	}
	var ws, job string
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "workspace="); ok {
			ws = v
		}
		if v, ok := strings.CutPrefix(line, "mail_job="); ok {
			job = v
		}
	}
	v, err := eng.JobDetail(ws, job, 0)
	if err != nil {
		return nil // the job is gone: nothing to add
	}
	var mailJob struct {
		Name          string `json:"name"`
		IngestAddress string `json:"ingestAddress"`
	}
	if err := jsonx.Unmarshal(v.JSON, &mailJob); err != nil {
		return err
	}
	add := fmt.Sprintf("mail_job_name=%s\nmail_address=%s\n", mailJob.Name, mailJob.IngestAddress)
	return writeFileAtomic(path, append(raw, add...), 0o600)
}

// printDemo prints the demo's keys and ready curl lines, read from
// <data>/demo-keys.txt (so they show again on every start). now dates the
// sample report e-mail.
func printDemo(out io.Writer, now time.Time, dataDir, publicURL, adminURL, token, smtpAddr string) {
	raw, err := os.ReadFile(filepath.Join(dataDir, "demo-keys.txt"))
	if err != nil {
		return
	}
	kv := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			kv[k] = v
		}
	}
	fmt.Fprintf(out, "demo workspace: %s (keys in %s)\n", kv["workspace"], filepath.Join(dataDir, "demo-keys.txt"))
	fmt.Fprintf(out, "REST key (all scopes): %s\n", kv["rest_key"])
	fmt.Fprintf(out, "report key: %s\n", kv["report_key"])
	fmt.Fprintf(out, "dashboard: %s/ (log in as %s, password %s)\n", publicURL, kv["owner"], kv["owner_password"])
	fmt.Fprintf(out, "report a backup run:\n  curl -s -X POST %s/api/v1/jobs/%s/report -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' -d '{\"status\":\"ok\",\"duration_seconds\":1200,\"size_bytes\":5368709120}'\n",
		publicURL, kv["job"], kv["report_key"])
	fmt.Fprintf(out, "see the job through the admin API:\n  curl -s %s/admin/v1/workspaces/%s/jobs/%s -H 'Authorization: Bearer %s'\n",
		adminURL, kv["workspace"], kv["job"], token)
	fmt.Fprintf(out, "read the jobs that failed through the REST API:\n  curl -s '%s/api/v1/jobs?status=failed&limit=5' -H 'Authorization: Bearer %s'\n",
		publicURL, kv["rest_key"])
	if kv["assistant_key"] != "" {
		fmt.Fprintf(out, "assistant (MCP) key, read-write: %s\n  stdio: %s mcp --key-file %s --url %s\n  HTTP:  POST %s/mcp with the key as a bearer token\n",
			kv["assistant_key"], selfName(), filepath.Join(dataDir, demoAssistantFile), publicURL, publicURL)
	}
	printDemoMail(out, now, dataDir, kv["mail_job_name"], kv["mail_address"], smtpAddr)
}

// selfName is how the running binary was started, for printed commands.
func selfName() string {
	if len(os.Args) > 0 && strings.ContainsRune(os.Args[0], '/') {
		return os.Args[0]
	}
	return "backupmon"
}

// demoMailJob is the demo job whose ingest address the demo prints: its
// vendor is generic, whose e-mail any script can write.
const demoMailJob = 11

// printDemoMail prints the ingest address of the demo's mail job and, with
// the SMTP listener on, a command that sends it a report e-mail written to
// <data>/demo-mail.eml (dated now, with a new Message-ID on every start).
func printDemoMail(out io.Writer, now time.Time, dataDir, jobName, address, smtpAddr string) {
	if address == "" {
		return
	}
	job := struct{ Name, IngestAddress string }{jobName, address}
	fmt.Fprintf(out, "ingest address of the job %q: %s\n", job.Name, job.IngestAddress)
	if smtpAddr == "" {
		fmt.Fprintln(out, "  (start with --smtp-listen 127.0.0.1:2525 to receive report e-mails)")
		return
	}
	path := filepath.Join(dataDir, "demo-mail.eml")
	if err := os.WriteFile(path, demoMail(now, job.IngestAddress), 0o600); err != nil {
		return
	}
	fmt.Fprintf(out, "send it a report e-mail:\n  curl -s smtp://%s --mail-from backups@fl-db01.example --mail-rcpt %s --upload-file %s\n",
		smtpAddr, job.IngestAddress, path)
}

// demoMail is a generic report e-mail of a failed database dump that ended
// a minute before now.
func demoMail(now time.Time, to string) []byte {
	end := now.Add(-time.Minute).UTC()
	start := end.Add(-95 * time.Second)
	var b strings.Builder
	fmt.Fprintf(&b, "From: backups@fl-db01.example\r\nTo: %s\r\nSubject: Backup FAILED: case-db-dump\r\n", to)
	fmt.Fprintf(&b, "Date: %s\r\nMessage-ID: <demo-%d@fl-db01.example>\r\n", end.Format(time.RFC1123Z), now.UnixNano())
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n")
	fmt.Fprintf(&b, "Job:          case-db-dump\r\nHost:         fl-db01\r\nStatus:       FAILED\r\n")
	fmt.Fprintf(&b, "Started:      %s\r\nFinished:     %s\r\n", start.Format("2006-01-02 15:04:05 -0700"), end.Format("2006-01-02 15:04:05 -0700"))
	b.WriteString("Duration:     95s\r\nSize:         0 B\r\nVerification: skipped\r\n")
	b.WriteString("Message:      pg_dump: error: could not write to output file: No space left on device\r\n")
	return []byte(b.String())
}
