#!/usr/bin/env bash
# Installs the Debian packages the test suite needs, when they are missing:
# redis-server and redis-tools (differential tests, redis-cli, redis-benchmark),
# python3-zmq and libzmq-ffi-perl (libzmq listeners: the interop tests and the
# Perl client), python3-redis (redis-py's Lock against the scripting family),
# nodejs and npm (BullMQ against the scripting family and streams), and
# the tools single tests run: redis-check-rdb/-aof (redis-tools), openssl
# (TLS certificates), script (bsdutils: interactive redis-cli), stdbuf
# (coreutils), ss (iproute2: socket marks), systemd-analyze (systemd: the
# units of packaging/). make test sets ZREDIS_TEST_REQUIRE_ALL, so a test
# whose tool is missing fails rather than skips.
# Debian's python modules load into /usr/bin/python3 only.
# Then BullMQ itself: npm ci of tests/testdata/bullmq's package-lock.json
# into tests/testdata/bullmq/node_modules (git-ignored), when that lock
# changed since the last install.
set -euo pipefail
need=()
command -v redis-server    >/dev/null 2>&1 || need+=(redis-server)
command -v redis-cli       >/dev/null 2>&1 || need+=(redis-tools)
command -v redis-benchmark >/dev/null 2>&1 || need+=(redis-tools)
command -v redis-check-rdb >/dev/null 2>&1 || need+=(redis-tools)
command -v redis-check-aof >/dev/null 2>&1 || need+=(redis-tools)
command -v openssl         >/dev/null 2>&1 || need+=(openssl)
command -v script          >/dev/null 2>&1 || need+=(bsdutils)
command -v stdbuf          >/dev/null 2>&1 || need+=(coreutils)
command -v ss              >/dev/null 2>&1 || need+=(iproute2)
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
/usr/bin/python3 -c 'import zmq' >/dev/null 2>&1 || need+=(python3-zmq)
/usr/bin/python3 -c 'import redis' >/dev/null 2>&1 || need+=(python3-redis)
perl -MZMQ::FFI -e1 >/dev/null 2>&1 || need+=(libzmq-ffi-perl)
command -v node            >/dev/null 2>&1 || need+=(nodejs)
command -v npm             >/dev/null 2>&1 || need+=(npm)
if [ ${#need[@]} -gt 0 ]; then
	sudo=""
	[ "$(id -u)" -ne 0 ] && sudo="sudo"
	echo "installing: ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq "${need[@]}" >/dev/null
	# The package may start a system redis-server on 6379; the tests use their own ports.
fi

# --ignore-scripts: the one install script of the tree is msgpackr-extract's,
# which would compile a native addon where no prebuilt one fits; msgpackr
# works without it.
bullmq="$(cd "$(dirname "$0")/.." && pwd)/tests/testdata/bullmq"
stamp="$bullmq/node_modules/.zredis-package-lock.json"
if ! cmp -s "$bullmq/package-lock.json" "$stamp"; then
	echo "installing: $bullmq/node_modules (npm ci)"
	(cd "$bullmq" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
	cp "$bullmq/package-lock.json" "$stamp"
fi
