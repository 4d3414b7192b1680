package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"backupmon/mailparse"
	"backupmon/mailparse/mailgrow"
)

const testSamples = "../testdata/emails"

// TestMailTemplatesParseLikeTheirSamples builds every e-mail bench mail
// sends and checks each one: the size asked (or the sample's own when
// larger), the vendor's parse of the sample, and the Message-ID the sender
// gives it.
func TestMailTemplatesParseLikeTheirSamples(t *testing.T) {
	vendors, err := mailVendors(testSamples, nil)
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int{12000, 30000}
	tmpls, err := buildTemplates(testSamples, vendors, sizes)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vendors {
		if len(tmpls[v]) == 0 {
			t.Errorf("%s: no e-mails", v)
		}
		for _, tm := range tmpls[v] {
			id := []byte("bench.42.nonce")
			msg := bytes.Join([][]byte{tm.head, id, tm.tail}, nil)
			if tm.size(len(id)) != len(msg) {
				t.Errorf("%s %s: size %d, message %d bytes", v, tm.name, tm.size(len(id)), len(msg))
			}
			sample, size, grown := strings.Cut(tm.name, "@")
			if grown {
				want := map[string]int{"12KB": 12000, "30KB": 30000}[size]
				if len(msg) < want || len(msg) > want+want/10+2000 {
					t.Errorf("%s %s: %d bytes", v, tm.name, len(msg))
				}
			}
			if bytes.Contains(msg, []byte("\n\n")) || bytes.Count(msg, []byte("\n")) != bytes.Count(msg, []byte("\r\n")) {
				t.Errorf("%s %s: line endings are not all CRLF", v, tm.name)
			}
			raw, err := readSample(v, sample)
			if err != nil {
				t.Fatal(err)
			}
			want, wm, err := mailparse.Parse(v, raw)
			if err != nil {
				t.Fatalf("%s %s: sample: %v", v, sample, err)
			}
			got, m, err := mailparse.Parse(v, msg)
			if err != nil {
				t.Errorf("%s %s: %v", v, tm.name, err)
				continue
			}
			if !mailgrow.Same(got, want) {
				t.Errorf("%s %s: parse %+v, sample's %+v", v, tm.name, got, want)
			}
			if m.MessageID != "bench.42.nonce@mail.bench.example" || m.Subject != wm.Subject {
				t.Errorf("%s %s: Message-ID %q subject %q", v, tm.name, m.MessageID, m.Subject)
			}
		}
	}
}

func readSample(vendor, name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(testSamples, vendor, name+".eml"))
}

// TestMailPlanSpreadsEvenly plays the plan up to a fixture's room: every
// job gets at most perJob e-mails, each of its own vendor, and every
// template of a vendor is used.
func TestMailPlanSpreadsEvenly(t *testing.T) {
	vendors := []string{"a", "b", "c"}
	tmpls := map[string][]*mailTemplate{}
	for _, v := range vendors {
		for i := range 4 + len(v) {
			tmpls[v] = append(tmpls[v], &mailTemplate{vendor: v, name: strings.Repeat("x", i)})
		}
	}
	f := &mailFixture{}
	for g := range 20 {
		f.Jobs = append(f.Jobs, mailJob{Vendor: vendors[g%len(vendors)]})
	}
	p := newMailPlan(f, tmpls)
	const perJob = 90
	perJobCount := make([]int, len(f.Jobs))
	used := map[*mailTemplate]int{}
	for i := range uint64(len(f.Jobs) * perJob) {
		job, tm := p.pick(i)
		perJobCount[job]++
		used[tm]++
		if tm.vendor != f.Jobs[job].Vendor {
			t.Fatalf("e-mail %d: a %s e-mail to a %s job", i, tm.vendor, f.Jobs[job].Vendor)
		}
	}
	for j, n := range perJobCount {
		if n != perJob {
			t.Errorf("job %d: %d e-mails", j, n)
		}
	}
	for _, v := range vendors {
		for _, tm := range tmpls[v] {
			if used[tm] == 0 {
				t.Errorf("%s %q never sent", v, tm.name)
			}
		}
	}
}

// TestMailLoadEndToEnd runs the load in-process against a small server: no
// errors, and the engine holds one result per 250.
func TestMailLoadEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an engine and an SMTP listener")
	}
	vendors, err := mailVendors(testSamples, nil)
	if err != nil {
		t.Fatal(err)
	}
	tmpls, err := buildTemplates(testSamples, vendors, []int{12000, 20000})
	if err != nil {
		t.Fatal(err)
	}
	s, err := openMailServer(t.TempDir(), 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.setUp(3, 8, vendors); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.smtp.Serve(ln)
	p := newMailPlan(&mailFixture{Jobs: s.jobs}, tmpls)
	var out bytes.Buffer
	load := runMailLoad(&out, loadConfig{conns: 4, warmup: 200 * time.Millisecond, duration: 500 * time.Millisecond},
		ln.Addr().String(), p, int64(len(s.jobs))*90, processCPU, nil)
	if load.errors > 0 || load.mails == 0 {
		t.Errorf("%d errors, %d e-mails:\n%s", load.errors, load.mails, out.String())
	}
	c, err := s.count()
	if err != nil {
		t.Fatal(err)
	}
	if c.Results != load.ok250 || c.Unparsed != 0 || c.Outcomes["recorded"] != load.ok250 {
		t.Errorf("%d answers 250; the engine holds %d results, %d unparsed; outcomes %v", load.ok250, c.Results, c.Unparsed, c.Outcomes)
	}
	if _, err := s.close(); err != nil {
		t.Fatal(err)
	}
}
