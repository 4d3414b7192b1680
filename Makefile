# backupmon: `make run` starts the service with the demo workspace, `make test`
# runs every test (with the race detector, fuzz seed corpora included).
GO ?= go
# The Go toolchain every target builds and tests with: the go command fetches
# it through the module proxy on first use (76 MB). This machine's own Go
# (1.26.8) has twelve standard-library vulnerabilities on our call paths
# (govulncheck, docs/decisions.md "Code"); go.mod asks for 1.27.3, so a go
# command without this export stops with a message naming the version.
GOTOOLCHAIN ?= go1.27.3
export GOTOOLCHAIN

.PHONY: run test browser bench bench-scale build fuzz clean chaos cluster lint

run: build
	./bin/backupmon serve --demo --data ./data --smtp-listen 127.0.0.1:2525

build:
	$(GO) build -o bin/backupmon ./cmd/backupmon

# The dashboard's end-to-end tests drive Debian's Chromium; `make test`
# installs it when it is missing and the machine lets it (root, or sudo
# without a password). Without it those tests skip and say so.
# The cluster's chaos test (three NATS servers, three nodes, three rounds)
# runs after the others, alone, so that its timings are the cluster's own.
test: browser
	$(GO) vet ./...
	$(GO) test -race -timeout 9m $$($(GO) list ./... | grep -v /clustertest$$)
	$(GO) test -race -count=1 -timeout 9m ./clustertest

# staticcheck, pinned (fetched from the module proxy on first use). Not part
# of `make test`: a new check in a later release must not fail a build that
# passed; it found nothing on 2026-11-27 after three fixes.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

# Three NATS servers and three nodes on loopback with the demo workspace;
# Ctrl-C stops them (data and logs in ./cluster-data).
cluster: build
	./bin/backupmon cluster local --dir ./cluster-data

# Twenty chaos rounds; the failover times go to bench/RESULTS.md.
# CHAOS_ARGS adds the test's flags, e.g. CHAOS_ARGS="-keep /tmp/chaos-logs"
# to keep every process's log.
CHAOS_ARGS ?=
chaos:
	$(GO) test -count=1 -timeout 30m -v -run TestChaos ./clustertest -args -rounds 20 -results $(CURDIR)/bench/RESULTS.md $(CHAOS_ARGS)

browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the dashboard's browser tests"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO=sudo; else SUDO=none; fi; \
	  if [ "$$SUDO" = none ]; then echo "cannot install chromium (not root, no sudo): browser tests will skip"; \
	  else { $$SUDO apt-get install -y --no-install-recommends chromium fonts-dejavu-core >/dev/null 2>&1 || \
	    { $$SUDO apt-get update >/dev/null 2>&1 && $$SUDO apt-get install -y --no-install-recommends chromium fonts-dejavu-core >/dev/null 2>&1; }; } || \
	    echo "chromium could not be installed: browser tests will skip"; fi; }

# The disk's fsync latency; the load generators (Report API writes, REST API
# reads) against the real server and a bare fasthttp handler; the Go
# benchmarks of the log, the snapshots, the engine's report path, REST pages,
# snapshot write and recovery (1,000,000 results); restart time and resident
# memory of that state in a fresh process; missing-report timers; report
# e-mails per second through the SMTP listener; the dashboard's queue page and
# one login's password hash. bench/RESULTS.md has the
# figures.
bench:
	$(GO) run ./bench fsync
	$(GO) run ./bench report
	$(GO) run ./bench read
	$(GO) test -run '^$$' -bench . -benchmem -timeout 30m ./wal ./snapshot ./engine
	$(GO) run ./bench recovery
	$(GO) run ./bench backup
	$(GO) run ./bench missing
	$(GO) run ./bench mail
	$(GO) test -run '^$$' -bench 'QueuePage|QueueRead|LoginHash' -benchtime 30x -count 5 ./bench/

# Issue 8's scale bench: 10,000 workspaces, 200,000 jobs, 20,000,000 results
# built through the engine; restart time, memory per job and per result, REST
# reads alone, with 10% of the workspaces reporting and with a noisy
# neighbour, retention at 30 days. It takes 4-6 minutes on the 2-core machine
# and up to about 6 GB of memory (the builder, then the server, each reach
# about 4.5 GB of RSS), so `make bench` leaves it out.
bench-scale:
	$(GO) run ./bench scale

# Run each fuzz target for FUZZTIME (default 1m); found inputs land in testdata/fuzz.
# A target fails only when it wrote a new failing input: Go 1.26's fuzzer can
# end a clean run with "context deadline exceeded" at FUZZTIME (golang/go#75804).
FUZZTIME ?= 1m
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; \
	    before=$$(ls $$dir/testdata/fuzz/$$f 2>/dev/null | wc -l); \
	    if ! $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; then \
	      after=$$(ls $$dir/testdata/fuzz/$$f 2>/dev/null | wc -l); \
	      if [ "$$after" -gt "$$before" ]; then echo "$$f: failing input in $$dir/testdata/fuzz/$$f"; exit 1; fi; \
	      echo "$$f: stopped without a failing input (golang/go#75804); going on"; \
	    fi; \
	  done; \
	done

clean:
	rm -rf bin data artifacts cluster-data
