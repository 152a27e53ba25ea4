#!/usr/bin/env bash
# Installs the Debian packages the test suite needs, when they are missing:
# redis-server and redis-tools (differential tests, redis-cli, redis-benchmark),
# python3-zmq and libzmq-ffi-perl (libzmq listeners: the interop tests and the
# Perl client), python3-redis (redis-py's Lock against the scripting family).
# Debian's python modules load into /usr/bin/python3 only.
set -euo pipefail
need=()
command -v redis-server    >/dev/null 2>&1 || need+=(redis-server)
command -v redis-cli       >/dev/null 2>&1 || need+=(redis-tools)
command -v redis-benchmark >/dev/null 2>&1 || need+=(redis-tools)
/usr/bin/python3 -c 'import zmq' >/dev/null 2>&1 || need+=(python3-zmq)
/usr/bin/python3 -c 'import redis' >/dev/null 2>&1 || need+=(python3-redis)
perl -MZMQ::FFI -e1 >/dev/null 2>&1 || need+=(libzmq-ffi-perl)
[ ${#need[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "installing: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq "${need[@]}" >/dev/null
# The package may start a system redis-server on 6379; the tests use their own ports.
