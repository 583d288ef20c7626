#!/usr/bin/env bash
# Instructions StrataHeap executes per malloc + free on its fast paths: runs
# strata_fast_path under callgrind, counting only its two loops (--toggle-collect), and
# prints Ir per pair (one malloc and one free, with a few loop instructions).
#
#   bench/strata_fast_path.sh [BUILD_DIR] [PAIRS]      defaults: build, 200000
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="${1:-$here/../build}"
pairs="${2:-200000}"
bin="$build/bin/strata_fast_path"
command -v valgrind >/dev/null || { echo "strata_fast_path.sh: valgrind is not installed" >&2; exit 2; }
[[ -x "$bin" ]] || { echo "strata_fast_path.sh: build $bin first (cmake --build $build --target strata_fast_path)" >&2; exit 2; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for loop in run_pairs run_batch; do
  valgrind --tool=callgrind --callgrind-out-file="$out/$loop.out" --toggle-collect="*$loop*" \
    "$bin" "$pairs" >/dev/null 2>"$out/$loop.log" || { cat "$out/$loop.log" >&2; exit 1; }
  awk -v loop="$loop" -v n="$pairs" '/^summary:/ { printf "%-10s %8.1f Ir per malloc+free\n", loop, $2 / n }' "$out/$loop.out"
done
