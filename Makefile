# zredis — build, run, test, bench.
#   make run    build and start zredis-server with the default configuration
#   make test   install what the tests need (Debian packages, BullMQ's npm packages), then run every test
#   make bench  zredis next to redis-server under redis-benchmark, with ratios
#               (ARGS or BENCH_ARGS go to scripts/bench: "-valkey /path/to/valkey-server"
#               adds a Valkey column, "-redis74 /path/to/redis-server" a 7.4 one
#               for the hash field expiration sections)
#   make install    build, then install the programs of cmd/ into $(DESTDIR)$(PREFIX)/bin
#                   (PREFIX=/usr/local and no DESTDIR by default; packaging/ has the systemd units)
#   make uninstall  remove them from there

GO        ?= go
BIN       := bin
# make install, as redis-server's: PREFIX (default /usr/local), and DESTDIR
# for staged installs (packaging), as the GNU conventions have it.
PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
INSTALL   ?= install
# One program per directory of cmd/ with a main.go: what `go build ./cmd/...` writes to $(BIN).
PROGRAMS  := $(sort $(notdir $(patsubst %/main.go,%,$(wildcard cmd/*/main.go))))
# make unit: every package but ./tests/ (the end-to-end suite, make
# integration), under the race detector. Packages without tests cost
# nothing here; leaving one out would mean its tests never run.
RACE_PKGS := ./cluster/... ./cmd/... ./commands/... ./config/... ./docs/... ./engine/... ./expiry/... \
	./internal/... ./keyspace/... ./listpack/... ./netloop/... ./persistence/... ./redisconv/... \
	./replication/... ./resp/... ./scripting/... ./scripts/... ./sds/... ./server/... ./tlsconfig/... ./zmqpub/...
# A test that needs a tool make deps installs fails, instead of skipping,
# when it is missing (internal/testsupport.RequireAllEnv; the Perl client's
# tests read it too). ZREDIS_TEST_REQUIRE_ALL=0 on the command line: skips.
export ZREDIS_TEST_REQUIRE_ALL := 1

.PHONY: all build run install uninstall test test-serial deps vet unit integration perl fuzz bench clean

all: build

build:
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ ./cmd/...

run: build
	./$(BIN)/zredis-server $(ARGS)

install: build
	$(INSTALL) -d $(DESTDIR)$(BINDIR)
	$(INSTALL) -m 0755 $(addprefix $(BIN)/,$(PROGRAMS)) $(DESTDIR)$(BINDIR)/

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(PROGRAMS))

deps:
	@./scripts/deps.sh

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 $(RACE_PKGS)

# The end-to-end suites: real zredis-server, redis-server and
# redis-sentinel processes on loopback ports (TestMain builds its own
# binaries). The bound is far above the 10 minutes they take on a busy
# 2-core machine, so that only a hung test reaches it.
integration:
	$(GO) test -count=1 -parallel 4 -timeout 25m ./tests/...

# The Perl expiry listener's tests (clients/perl), end to end with bin/.
perl: build
	prove -r clients/perl/t

# Fuzzing, one target after another: name, package, and its budget in
# executions, about 10 s each on a 2-core machine. Budgets are counts, not
# durations: with a duration, Go 1.26's fuzz coordinator can end a clean
# run with "context deadline exceeded" (golang/go#75804). make test runs a
# quarter of each (FUZZDIV=4: the seed corpora already run in unit, and
# most of a fuzz step's time is the instrumented build); FUZZTIME=2m (or
# 1000000x) overrides them all for a longer run.
FUZZ_TARGETS := \
	FuzzReadBatch:./resp/:40000 \
	FuzzBigArgs:./resp/:30000 \
	FuzzCommandArgs:./commands/:20000 \
	FuzzDecode:./zmqpub/:200000 \
	FuzzSpoolOpen:./zmqpub/:5000 \
	FuzzLoad:./persistence/rdb/:50000 \
	FuzzRestore:./persistence/rdb/:80000 \
	FuzzLoad:./persistence/aof/:80000 \
	FuzzCheck:./persistence/aof/:25000
FUZZDIV ?= 1

fuzz:
	@set -e; for spec in $(FUZZ_TARGETS); do \
		name=$${spec%%:*}; rest=$${spec#*:}; pkg=$${rest%%:*}; count=$${rest#*:}; \
		budget=$(or $(FUZZTIME),$$((count / $(FUZZDIV)))x); \
		echo "$(GO) test -run=NONE -fuzz=^$$name\$$ -fuzztime=$$budget $$pkg"; \
		$(GO) test -run=NONE -fuzz="^$$name\$$" -fuzztime=$$budget $$pkg; \
	done

# make test: the integration suite, which mostly waits on its servers,
# runs beside the CPU-bound steps (the unit tests under the race
# detector, the Perl client, fuzzing), which run one after another. Each
# step's output is printed whole when it ends (-O).
test: deps vet build
	@$(MAKE) --no-print-directory -O -j2 integration test-serial

test-serial:
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory perl
	@$(MAKE) --no-print-directory fuzz FUZZDIV=4

bench: deps build
	$(GO) run ./scripts/bench $(BENCH_ARGS) $(ARGS)

clean:
	rm -rf $(BIN)
