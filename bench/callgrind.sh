#!/usr/bin/env bash
# Counts the instructions the layered and the hand-written Kingsley heap execute on each
# abstraction_penalty workload, under valgrind's callgrind, and prints their ratio.
#
#   bench/callgrind.sh [BUILD_DIR] [OPS]      defaults: build, 200000
#
# Only the replay loop is counted (--toggle-collect on replay_layered / replay_monolithic):
# generating the workload, building and destroying the heap are left out, so the count is
# exactly the allocator's malloc/free work plus the same few loop instructions on both sides.
# The total is callgrind's Ir from the "summary:" line of its output file.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="${1:-$here/../build}"
ops="${2:-200000}"
bin="$build/bin/abstraction_penalty"
workloads=(same-size-churn mixed-sizes alloc-all-free-all lifo-pairs)

if ! command -v valgrind >/dev/null; then
  echo "callgrind.sh: valgrind is not installed (apt-get install valgrind)" >&2
  exit 2
fi
if [[ ! -x "$bin" ]]; then
  echo "callgrind.sh: $bin not found; build it first:" >&2
  echo "  cmake --build $build --target abstraction_penalty" >&2
  exit 2
fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# Prints the Ir total of one side on one workload.
count() {
  local side="$1" workload="$2" file="$out/$1.$2.out"
  valgrind --tool=callgrind --callgrind-out-file="$file" \
    --toggle-collect="*replay_$side*" \
    "$bin" --only "$side" --workload "$workload" --rounds 1 --ops "$ops" \
    >/dev/null 2>"$out/$side.$workload.log" || {
    echo "callgrind.sh: valgrind failed on $side $workload, see:" >&2
    cat "$out/$side.$workload.log" >&2
    exit 1
  }
  awk '/^summary:/ { print $2; found = 1 } END { if (!found) exit 1 }' "$file"
}

printf 'Instructions (callgrind Ir) in the replay loop, %s ops per workload\n\n' "$ops"
printf '%-20s %14s %14s %8s %10s %10s\n' workload layered monolithic "L/M" "L Ir/op" "M Ir/op"
for w in "${workloads[@]}"; do
  l="$(count layered "$w")"
  m="$(count monolithic "$w")"
  awk -v w="$w" -v l="$l" -v m="$m" -v n="$ops" 'BEGIN {
    printf "%-20s %14d %14d %8.3f %10.2f %10.2f\n", w, l, m, l / m, l / n, m / n }'
done
