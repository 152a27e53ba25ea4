# zredis — build, run, test, bench.
#   make run    build and start zredis-server with the default configuration
#   make test   install what the tests need (Debian packages), then run every test
#   make bench  zredis next to redis-server under redis-benchmark, with ratios
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
# Packages whose state is shared between goroutines run under the race detector.
RACE_PKGS := ./resp/... ./sds/... ./redisconv/... ./config/... ./keyspace/... ./expiry/... ./engine/... ./commands/... ./replication/... ./server/... ./zmqpub/... ./persistence/... ./cmd/... ./internal/...

.PHONY: all build run install uninstall test deps vet unit integration perl fuzz bench clean

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

integration: build
	$(GO) test -count=1 -timeout 15m ./tests/...

# The Perl expiry listener's tests (clients/perl), end to end with bin/.
perl: build
	prove -r clients/perl/t

# Fuzz budgets are execution counts, not durations: with a duration, Go 1.26's
# fuzz coordinator can end a clean run with "context deadline exceeded"
# (golang/go#75804). Each count is about 10 s of fuzzing on a 2-core machine;
# FUZZTIME=2m (or 1000000x) overrides them all for a longer run.
fuzz:
	$(GO) test -run=NONE -fuzz=^FuzzReadBatch$$ -fuzztime=$(or $(FUZZTIME),40000x) ./resp/
	$(GO) test -run=NONE -fuzz=^FuzzBigArgs$$ -fuzztime=$(or $(FUZZTIME),30000x) ./resp/
	$(GO) test -run=NONE -fuzz=^FuzzCommandArgs$$ -fuzztime=$(or $(FUZZTIME),20000x) ./commands/
	$(GO) test -run=NONE -fuzz=^FuzzDecode$$ -fuzztime=$(or $(FUZZTIME),200000x) ./zmqpub/
	$(GO) test -run=NONE -fuzz=^FuzzSpoolOpen$$ -fuzztime=$(or $(FUZZTIME),5000x) ./zmqpub/
	$(GO) test -run=NONE -fuzz=^FuzzLoad$$ -fuzztime=$(or $(FUZZTIME),50000x) ./persistence/rdb/
	$(GO) test -run=NONE -fuzz=^FuzzRestore$$ -fuzztime=$(or $(FUZZTIME),80000x) ./persistence/rdb/
	$(GO) test -run=NONE -fuzz=^FuzzLoad$$ -fuzztime=$(or $(FUZZTIME),80000x) ./persistence/aof/
	$(GO) test -run=NONE -fuzz=^FuzzCheck$$ -fuzztime=$(or $(FUZZTIME),25000x) ./persistence/aof/

test: deps vet unit integration perl fuzz

bench: deps build
	$(GO) run ./scripts/bench

clean:
	rm -rf $(BIN)
