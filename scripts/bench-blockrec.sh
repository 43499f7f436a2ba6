#!/bin/sh
# Crash-site checking throughput against the bare kernel cost of one image
# (attach + mount + walk + unmount + detach), measured in one run.
# Needs root, /dev/fuse and /dev/loop-control.
set -eu
cd "$(dirname "$0")/.."
exec go test -run '^$' -bench CrashSites -benchtime 1x "$@" ./blockrec/
