#!/bin/sh
# Generates the SAT benchmark suites (random 3-SAT at ratio 4.26 with 200 to
# 350 variables, pigeonhole PHP(n+1,n) for n = 6..10) and compares isovet's
# solver with minisat on them, one file at a time, by CPU time.
#
#   bench/sat/run.sh [WORKDIR]          (from the repository root)
#   TIMEOUT=600s MINISAT=/usr/bin/minisat bench/sat/run.sh /tmp/satbench
set -eu
dir=${1:-$(mktemp -d)}
mkdir -p "$dir"
go build -o "$dir/satbench" ./bench/sat
"$dir/satbench" gen "$dir/cnf"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "minisat: $(${MINISAT:-/usr/bin/minisat} --help 2>&1 | head -1 || true)"
"$dir/satbench" compare "$dir/cnf" -minisat "${MINISAT:-/usr/bin/minisat}" -timeout "${TIMEOUT:-300s}"
