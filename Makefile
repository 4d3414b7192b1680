# backupmon: `make run` starts the service with the demo workspace, `make test`
# runs every test (with the race detector, fuzz seed corpora included).
GO ?= go

.PHONY: run test bench build fuzz clean

run: build
	./bin/backupmon serve --demo --data ./data

build:
	$(GO) build -o bin/backupmon ./cmd/backupmon

test:
	$(GO) vet ./...
	$(GO) test -race -timeout 9m ./...

# The disk's fsync latency; the load generators (Report API writes, REST API
# reads) against the real server and a bare fasthttp handler; the Go
# benchmarks of the log, the snapshots, the engine's report path, REST pages,
# snapshot write and recovery (1,000,000 results); restart time and resident
# memory of that state in a fresh process. bench/RESULTS.md has the figures.
bench:
	$(GO) run ./bench fsync
	$(GO) run ./bench report
	$(GO) run ./bench read
	$(GO) test -run '^$$' -bench . -benchmem -timeout 30m ./wal ./snapshot ./engine
	$(GO) run ./bench recovery

# Run each fuzz target for FUZZTIME (default 1m); found inputs land in testdata/fuzz.
FUZZTIME ?= 1m
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

clean:
	rm -rf bin data
