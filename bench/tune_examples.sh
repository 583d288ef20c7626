#!/usr/bin/env bash
# The `strata tune` runs of docs/results.md: the three bundled workloads (size 1, seed 1; the
# 4-thread server also for --goal memory), then two real programs recorded and checked live:
# g++ -O2 compiling a generated C++ file (its two processes that allocate are tuned together,
# so it gets twice the budget), and perl running bench/tune/threads.pl (8 waves of 8 threads
# that come and go, each building and dropping a hash).
#
# usage: bench/tune_examples.sh [BUILD_DIR (default build)] [OUT (default tune-examples)]
#        BUDGET=300 (replays per run of strata tune) REPEAT=3
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-tune-examples}
budget=${BUDGET:-300}
repeat=${REPEAT:-3}
strata=$build/bin/strata
mkdir -p "$out/traces"

for w in web-proxy editor server; do
  "$strata" generate "$w" --size 1 --seed 1 -o "$out/traces/$w.trace"
  echo "== $w"
  "$strata" tune "$out/traces/$w.trace" --budget "$budget" --repeat "$repeat" --out "$out/$w"
done
echo "== server, goal memory"
"$strata" tune "$out/traces/server.trace" --goal memory --budget "$budget" --repeat "$repeat" \
  --out "$out/server-memory"

python3 -c 'import sys; from pathlib import Path; sys.path.insert(0, "bench"); import dropin_suite; dropin_suite.gxx_source(Path(sys.argv[1]), 3)' \
  "$out/gxx_input.cpp"
echo "== g++"
"$strata" tune --budget $((budget * 2)) --repeat "$repeat" --out "$out/gxx" -- \
  g++ -std=c++17 -O2 -c "$out/gxx_input.cpp" -o "$out/gxx_input.o"

echo "== perl threads"
"$strata" tune --budget "$budget" --repeat "$repeat" --out "$out/perl-threads" -- \
  perl bench/tune/threads.pl
