package suggest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// samples are the summaries of the project's sample report e-mails
// (testdata/emails/<vendor>/*.json) with the category we expect for each.
var samples = []struct {
	vendor, text, category string
}{
	{"acronis", "The backup location 'Cloud storage' is not reachable: the connection to the data center timed out after 300 seconds.", "network"},
	{"acronis", `3 files were skipped because another process had locked them, for example C:\Users\reception\AppData\Local\Microsoft\Outlook\reception@brightwater-dental.example.ost.`, "source"},
	{"altaro", "BW-PMS01: An application-consistent checkpoint could not be taken, so a crash-consistent backup was taken instead.", "snapshot"},
	{"altaro", "The backup location 'HF-USB-02' is not connected; plug in the drive or choose another backup location.", "storage"},
	{"backupexec", `Folder \\RV-FS02\D$\Scans\Temp could not be accessed; the files and subfolders it contains were skipped.`, "source"},
	{"backupexec", "The connection to the Remote Agent on RV-SQL02 was lost during the operation.", "network"},
	{"cove", `D:\Shares\Imaging\xray_2026_03_04.db: the file could not be read because another process is using it.`, "source"},
	{"cove", "Could not connect to the cloud storage node: the device's authentication token was rejected (expired on 2026-01-28).", "credentials"},
	{"datto", "The VSS writer 'SqlServerWriter' was in a failed state; this recovery point was taken as crash-consistent.", "snapshot"},
	{"datto", "Unable to connect to the Datto agent on BW-FS01 (port 25568): the connection was refused.", "agent"},
	{"generic", "7 files changed while being read and were copied in an inconsistent state.", "source"},
	{"generic", `pg_dump: connection to server at "rv-db01" (10.20.0.15), port 5432 failed: password authentication failed for user "backup"`, "credentials"},
	{"macrium", "Snapshot warning: the writer 'SqlServerWriter' was not in a stable state and was left out of the snapshot.", "snapshot"},
	{"macrium", `Unable to write to the destination \\hf-nas01\images: the network share is no longer available (error 64).`, "network"},
	{"msp360", `2 files were not backed up because they were locked by another process: D:\Buchhaltung\DATEV\mandant_0147.mdb, D:\Buchhaltung\DATEV\mandant_0147.ldb`, "source"},
	{"msp360", "Access to storage account 'RV-Wasabi-US' was denied: the access key is no longer valid or has been disabled.", "credentials"},
	{"nakivo", "KL-PRINT01: Application-aware mode could not be used because guest credentials were rejected; the VM was processed in crash-consistent mode.", "credentials"},
	{"nakivo", `The backup repository "HF-Repo-NAS" is not accessible: the repository is detached or its storage is offline.`, "storage"},
	{"synology", `Some files could not be backed up: 14 files in C:\Users\dr.okafor\OneDrive - Brightwater Dental are online-only placeholders and were skipped.`, "source"},
	{"synology", "Unable to connect to the backup destination Synology C2 Storage: authentication failed for the target account.", "credentials"},
	// Missing rights rather than a wrong password: we file it under
	// credentials, as the fix is the account the job uses.
	{"veeam", `Unable to truncate transaction logs on BW-SQL02: the account BWDENTAL\svc-backup is not a member of the sysadmin server role.`, "credentials"},
	{"veeam", `Failed to open backup repository HF-REPO01: the share \\hf-nas02\veeam could not be reached (the network path was not found).`, "storage"},
}

func TestSamples(t *testing.T) {
	for _, s := range samples {
		t.Run(s.vendor+"/"+prefix(s.text), func(t *testing.T) {
			got, ok := For(s.vendor, s.text)
			if !ok {
				t.Fatalf("For(%q, %q): no suggestion, want category %s", s.vendor, s.text, s.category)
			}
			if got.Category != s.category {
				t.Errorf("For(%q, %q).Category = %s (rule %s), want %s", s.vendor, s.text, got.Category, catalogue[find(s.vendor, s.text)].name, s.category)
			}
			checkSuggestion(t, got)
		})
	}
}

// TestSamplesWithoutVendor: the general rules alone give every sample a
// suggestion (a job whose vendor is unknown still gets one).
func TestSamplesWithoutVendor(t *testing.T) {
	for _, s := range samples {
		t.Run(s.vendor+"/"+prefix(s.text), func(t *testing.T) {
			got, ok := For("", s.text)
			if !ok {
				t.Fatalf("For(\"\", %q): no suggestion", s.text)
			}
			checkSuggestion(t, got)
		})
	}
}

// TestTricky: texts where a loose pattern or the order of the rules could
// pick the wrong cause.
func TestTricky(t *testing.T) {
	for _, tc := range []struct{ vendor, text, rule string }{
		// Host names that contain pattern words.
		{"", "RV-DNS01: The VSS writer 'NTDS' was in a failed state.", "vss-writer"},
		{"", "VMHOST02: Checksum mismatch in block 12.", "checksum"},
		{"", "The VM BW-APP03 was not found on host HV01.", "vm-not-found"},
		// A credential problem reported as a connection failure.
		{"", "Could not connect to the NAS: logon failure.", "logon-failure"},
		{"", "Unable to connect to the server: the user does not exist.", "account-disabled"},
		// Shadow copy storage is a snapshot problem although it says "insufficient storage".
		{"", "Insufficient storage available to create the shadow copy storage file.", "shadow-storage"},
		// The lock is not a locked account.
		{"", "The file is locked by another process.", "locked-by-another-process"},
		{"", "The account is locked out.", "account-disabled"},
		// A VSS timeout is not a network timeout.
		{"", "The VSS writer 'SqlServerWriter' timed out.", "vss-writer"},
		// A vendor's rule does not apply to another vendor.
		{"veeam", "Unable to connect to the Datto agent on BW-FS01 (port 25568).", "agent-offline"},
		{"datto", "Failed to open backup repository HF-REPO01.", "repository-unavailable"},
	} {
		t.Run(tc.rule+"/"+prefix(tc.text), func(t *testing.T) {
			name := "none"
			if i := find(tc.vendor, tc.text); i >= 0 {
				name = catalogue[i].name
			}
			if name != tc.rule {
				t.Errorf("find(%q, %q) selects %s, want %s", tc.vendor, tc.text, name, tc.rule)
			}
		})
	}
}

func TestNoMatch(t *testing.T) {
	for _, tc := range []struct{ vendor, text string }{
		{"", "Backup failed (reported through the Report API)"},
		{"veeam", "Backup failed (reported through the Report API)"},
		{"generic", ""},
		{"", ""},
		{"datto", "   \n\t "},
		{"", "lorem ipsum dolor sit amet consectetur adipiscing elit"},
		{"acronis", "the quick brown fox jumps over the lazy dog"},
		{"macrium", "Job finished with status Failed: 0 of 1 items processed."},
		{"nakivo", "Backup failed."},
		{"unknown-vendor", "purple elephants report 2026 numbers"},
	} {
		t.Run(tc.vendor+"/"+prefix(tc.text), func(t *testing.T) {
			if got, ok := For(tc.vendor, tc.text); ok || got != (Suggestion{}) {
				t.Errorf("For(%q, %q) = %+v, %v (rule %s), want no suggestion", tc.vendor, tc.text, got, ok, catalogue[find(tc.vendor, tc.text)].name)
			}
		})
	}
}

var (
	banned    = []string{"is caused by", "definitely", "the cause is"}
	hedges    = []string{"possibly", "may ", "might", "look", "likely", "appears", "seem", "suggest", "could", "probably", "perhaps"}
	sentences = regexp.MustCompile(`[.!?] +[A-Z]`)
)

// checkSuggestion checks the contract's values and the wording rules.
func checkSuggestion(t *testing.T, s Suggestion) {
	t.Helper()
	if !slices.Contains(categories, s.Category) {
		t.Errorf("category %q is not allowed", s.Category)
	}
	if !slices.Contains(confidences, s.Confidence) {
		t.Errorf("confidence %q is not allowed", s.Confidence)
	}
	c := s.LikelyCause
	switch {
	case c == "":
		t.Errorf("empty likelyCause")
	case utf8.RuneCountInString(c) > 200:
		t.Errorf("likelyCause has %d characters, over 200: %q", utf8.RuneCountInString(c), c)
	case !strings.HasSuffix(c, "."):
		t.Errorf("likelyCause does not end with a period: %q", c)
	case strings.TrimSpace(c) != c || strings.Contains(c, "  "):
		t.Errorf("likelyCause has stray white space: %q", c)
	case len(sentences.FindAllString(c, -1)) > 1:
		t.Errorf("likelyCause has more than two sentences: %q", c)
	}
	low := strings.ToLower(c)
	for _, b := range banned {
		if strings.Contains(low, b) {
			t.Errorf("likelyCause states a diagnosis (%q): %q", b, c)
		}
	}
	if !slices.ContainsFunc(hedges, func(h string) bool { return strings.Contains(low, h) }) {
		t.Errorf("likelyCause is not worded as a suggestion (none of %q): %q", hedges, c)
	}
}

// TestCatalogue walks the table: allowed values, wording, well-formed
// patterns, known vendors, unique names.
func TestCatalogue(t *testing.T) {
	names := map[string]bool{}
	for i, r := range catalogue {
		t.Run(r.name, func(t *testing.T) {
			if r.name == "" || names[r.name] {
				t.Errorf("rule %d: empty or repeated name %q", i, r.name)
			}
			names[r.name] = true
			checkSuggestion(t, Suggestion{LikelyCause: r.cause, Confidence: r.confidence, Category: r.category})
			for _, v := range r.vendors {
				if !slices.Contains(vendors, v) {
					t.Errorf("unknown vendor %q", v)
				}
			}
			if len(r.patterns) == 0 {
				t.Errorf("no patterns")
			}
			for _, p := range r.patterns {
				for _, s := range strings.Split(p, " & ") {
					if expr, ok := strings.CutPrefix(s, rePrefix); ok {
						if _, err := regexp.Compile(expr); err != nil {
							t.Errorf("pattern %q: %v", p, err)
						}
						continue
					}
					if s == "" || s != strings.ToLower(s) || strings.TrimSpace(s) != s || strings.Contains(s, "&") || normalize(s) != s {
						t.Errorf("pattern %q: part %q is not a normalized lowercase substring", p, s)
					}
				}
			}
			if r.example == "" {
				t.Errorf("no example")
			}
		})
	}
	if len(compiled.needles) > maxNeedles {
		t.Errorf("%d distinct substrings, over maxNeedles (%d)", len(compiled.needles), maxNeedles)
	}
	// Vendor rules come first in the table, as their group is tried first.
	general := false
	for _, r := range catalogue {
		if len(r.vendors) == 0 {
			general = true
		} else if general {
			t.Errorf("vendor rule %s follows a general rule; keep vendor rules at the top", r.name)
		}
	}
}

// TestEveryRuleReachable: each rule's example selects that very rule, for
// every vendor the rule names (or with no vendor for a general rule).
func TestEveryRuleReachable(t *testing.T) {
	for i, r := range catalogue {
		vs := r.vendors
		if len(vs) == 0 {
			vs = []string{""}
		}
		for _, v := range vs {
			t.Run(r.name+"/"+v, func(t *testing.T) {
				if got := find(v, r.example); got != i {
					name := "none"
					if got >= 0 {
						name = catalogue[got].name
					}
					t.Errorf("example %q (vendor %q) selects rule %s, want %s", r.example, v, name, r.name)
				}
			})
		}
	}
}

// TestVendorRulesStayWithTheirVendor: a vendor's rule never decides for
// another vendor.
func TestVendorRulesStayWithTheirVendor(t *testing.T) {
	for _, r := range catalogue {
		if len(r.vendors) == 0 {
			continue
		}
		for _, v := range append(slices.Clone(vendors), "") {
			if slices.Contains(r.vendors, v) {
				continue
			}
			if i := find(v, r.example); i >= 0 && catalogue[i].name == r.name {
				t.Errorf("rule %s (vendors %v) decided for vendor %q", r.name, r.vendors, v)
			}
		}
	}
}

func TestVendorSpelling(t *testing.T) {
	text := "Unable to connect to the Datto agent on BW-FS01 (port 25568): the connection was refused."
	want := find("datto", text)
	for _, v := range []string{"Datto", " datto ", "DATTO"} {
		if got := find(v, text); got != want {
			t.Errorf("vendor %q selects %s, want %s", v, catalogue[got].name, catalogue[want].name)
		}
	}
}

func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"  Hello\r\n\tWORLD  ", "hello world"},
		{"The VSS writer \u2018SqlServerWriter\u2019 is \u201cfailed\u201d", `the vss writer 'sqlserverwriter' is "failed"`},
		{"crash\u2011consistent\u00a0backup", "crash-consistent backup"},
		{"ÜBER Straße", "über straße"},
		{"bad \xff byte", "bad \ufffd byte"},
	} {
		if got := normalize(tc.in); got != tc.want {
			t.Errorf("normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	long := strings.Repeat("a", 3*maxInput)
	if got := normalize(long); len(got) != maxInput {
		t.Errorf("normalize of %d bytes kept %d, want %d", len(long), len(got), maxInput)
	}
}

func TestTypography(t *testing.T) {
	// Curly quotes, a non-breaking hyphen and line breaks, as HTML mails have them.
	text := "The VSS writer \u2018SqlServerWriter\u2019 was in a failed\n   state; this recovery point was taken as crash\u2011consistent."
	got, ok := For("datto", text)
	if !ok || got.Category != "snapshot" {
		t.Errorf("For = %+v, %v; want a snapshot suggestion", got, ok)
	}
}

func TestDeterministic(t *testing.T) {
	want := make([]Suggestion, len(samples))
	for i, s := range samples {
		want[i], _ = For(s.vendor, s.text)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 50; n++ {
				for i, s := range samples {
					if got, _ := For(s.vendor, s.text); got != want[i] {
						t.Errorf("For(%q, %q) gave %+v, then %+v", s.vendor, s.text, want[i], got)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

func TestAllowedValues(t *testing.T) {
	c := Categories()
	if want := []string{"storage", "network", "credentials", "snapshot", "agent", "source", "schedule", "license", "configuration", "unknown"}; !slices.Equal(c, want) {
		t.Errorf("Categories() = %q, want %q", c, want)
	}
	if got, want := Confidences(), []string{"low", "medium", "high"}; !slices.Equal(got, want) {
		t.Errorf("Confidences() = %q, want %q", got, want)
	}
	c[0] = "changed"
	if Categories()[0] != "storage" {
		t.Errorf("Categories returns the package's own slice")
	}
}

// TestRuleCounts logs the catalogue's size per category (go test -v).
func TestRuleCounts(t *testing.T) {
	counts := map[string]int{}
	for _, r := range catalogue {
		counts[r.category]++
	}
	var b strings.Builder
	for _, c := range categories {
		fmt.Fprintf(&b, " %s=%d", c, counts[c])
	}
	t.Logf("%d rules:%s", len(catalogue), b.String())
}

// findSlow is find without the trigram filter and the cache: every rule's
// patterns are read straight from the table.
func findSlow(vendor, text string) int {
	low := normalize(text)
	if low == "" {
		return -1
	}
	vendor = strings.ToLower(strings.TrimSpace(vendor))
	try := func(general bool) int {
		for i, r := range catalogue {
			if (len(r.vendors) == 0) != general || (!general && !slices.Contains(r.vendors, vendor)) {
				continue
			}
			for _, p := range r.patterns {
				all := true
				for _, s := range strings.Split(p, " & ") {
					if expr, ok := strings.CutPrefix(s, rePrefix); ok {
						all = all && regexp.MustCompile(expr).MatchString(low)
					} else {
						all = all && strings.Contains(low, s)
					}
				}
				if all {
					return i
				}
			}
		}
		return -1
	}
	if slices.Contains(vendors, vendor) {
		if i := try(false); i >= 0 {
			return i
		}
	}
	return try(true)
}

func TestFindMatchesReference(t *testing.T) {
	var texts []string
	for _, s := range samples {
		texts = append(texts, s.text)
	}
	for _, r := range catalogue {
		texts = append(texts, r.example, r.cause)
	}
	for _, text := range texts {
		for _, v := range append(slices.Clone(vendors), "", "other") {
			if got, want := find(v, text), findSlow(v, text); got != want {
				t.Errorf("find(%q, %q) = %d, reference %d", v, text, got, want)
			}
		}
	}
}

func FuzzFor(f *testing.F) {
	for _, s := range samples {
		f.Add(s.vendor, s.text)
	}
	for _, r := range catalogue {
		v := ""
		if len(r.vendors) > 0 {
			v = r.vendors[0]
		}
		f.Add(v, r.example)
	}
	f.Add("", "")
	f.Add("VEEAM", "\xff\xfe error 64 port 99999 \u2019")
	f.Fuzz(func(t *testing.T, vendor, text string) {
		if i, j := find(vendor, text), findSlow(vendor, text); i != j {
			t.Fatalf("find(%q, %q) = %d, reference %d", vendor, text, i, j)
		}
		got, ok := For(vendor, text)
		if !ok {
			if got != (Suggestion{}) {
				t.Fatalf("no match but a non-zero suggestion %+v", got)
			}
			return
		}
		if !slices.Contains(categories, got.Category) || !slices.Contains(confidences, got.Confidence) || got.LikelyCause == "" {
			t.Fatalf("For(%q, %q) = %+v: invalid values", vendor, text, got)
		}
		if again, _ := For(vendor, text); again != got {
			t.Fatalf("For(%q, %q) is not deterministic: %+v then %+v", vendor, text, got, again)
		}
	})
}

func BenchmarkFor(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range samples {
			For(s.vendor, s.text)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(samples)), "ns/text")
}

// BenchmarkForNoMatch is the worst case: a 500-character text that no rule
// matches, so every rule is tried.
func BenchmarkForNoMatch(b *testing.B) {
	text := strings.Repeat("Backup job Nightly ended with state Failed on host RV-APP01. ", 9)[:500]
	if _, ok := For("veeam", text); ok {
		b.Fatalf("the benchmark text matches rule %s", catalogue[find("veeam", text)].name)
	}
	b.ReportAllocs()
	for b.Loop() {
		For("veeam", text)
	}
}

func prefix(s string) string {
	if len(s) > 40 {
		s = s[:40]
	}
	return strings.NewReplacer("/", "_", " ", "_").Replace(s)
}
