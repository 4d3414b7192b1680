# backupmon: `make run` starts the service with the demo workspace, `make test`
# runs every test (with the race detector, fuzz seed corpora included).
GO ?= go

.PHONY: run test bench build fuzz clean

run:
	$(GO) run ./cmd/backupmon serve --demo --data ./data

build:
	$(GO) build -o bin/backupmon ./cmd/backupmon

test:
	$(GO) vet ./...
	$(GO) test -race -timeout 9m ./...

# The load generator against the real server and a bare fasthttp handler,
# then the Go benchmarks of the log, the snapshots and recovery.
bench:
	$(GO) run ./bench report
	$(GO) test -run '^$$' -bench . -benchmem ./wal ./snapshot ./engine

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
