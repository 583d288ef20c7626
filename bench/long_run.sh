#!/usr/bin/env bash
# How each analysis's memory and time follow the length of a recording when what is live stays
# the same: the long-running workload `steady` (4,096 live objects, about 3 MiB, however many
# events it makes) generated at each SIZE (million events), then `strata stats`, `strata
# replay` on glibc, `strata compare --runs 1` on glibc and strata, and `strata report` on it,
# each timed with its peak RSS (/usr/bin/time: the command and the children it waits for; for
# replay and compare that is the largest of the replayers), and `strata diff` of the trace
# with itself and `strata export --to mtrace`. Where python3 is installed, a recorded program
# too: a Python loop that keeps 4,000 buffers live, recorded with --sites at about SIZE million
# events (`record`), then `strata stats --sites` on it (`sites`; its peak includes addr2line's,
# which symbolizes the listed sites) and `strata diff` of it with itself (`diff-sites`). A
# command whose peak grows with SIZE keeps memory per object ever allocated; a bounded one
# stays within a few MiB.
#
# usage: bench/long_run.sh [BUILD_DIR (default build)] [OUT (default long-run)] [SIZE...]
#        (SIZE default: 10 100; 1000 is a billion events and needs about 5 GB of disk, and
#        35 GB more for export's mtrace text, deleted after it)
#        LONG_RUN_COMMANDS="stats sites ..." runs only those of the commands named below
#        (generate always runs; record when sites or diff-sites is asked for).
# Prints one table row per command and size; exits 1 when a command fails.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-long-run}
shift $(($# > 2 ? 2 : $#))
sizes=("$@")
((${#sizes[@]})) || sizes=(10 100)
strata=$build/bin/strata
[[ -x $strata ]] || { echo "long_run.sh: no $strata (build the strata_toolkit target)" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "long_run.sh: needs /usr/bin/time (Debian: apt-get install time)" >&2; exit 1; }
mkdir -p "$out"

commands=" ${LONG_RUN_COMMANDS:-generate stats diff export record sites diff-sites replay compare report} "

# measure NAME SIZE COMMAND...: runs it, prints "NAME SIZE seconds peak-MiB"; nothing when
# NAME is not among the commands asked for (generate and record always run when called).
measure() {
  local name=$1 size=$2
  shift 2
  [[ $commands == *" $name "* || $name == generate || $name == record ]] || return 0
  local log="$out/$name-$size.time"
  if ! /usr/bin/time -f '%e %M' -o "$log" "$@" > "$out/$name-$size.out" 2>&1; then
    echo "long_run.sh: $name at size $size failed (see $out/$name-$size.out)" >&2
    exit 1
  fi
  read -r seconds kib < "$log"
  printf '%-10s %8s %10s %10.1f\n' "$name" "$size" "$seconds" "$(awk -v k="$kib" 'BEGIN{print k/1024}')"
}

printf '%-10s %8s %10s %10s\n' command "M events" seconds "peak MiB"
for size in "${sizes[@]}"; do
  trace="$out/steady-$size.trace"
  measure generate "$size" "$strata" generate steady --size "$size" -o "$trace"
  measure stats "$size" "$strata" stats "$trace"
  measure diff "$size" "$strata" diff "$trace" "$trace"
  measure export "$size" "$strata" export --to mtrace "$trace" -o "$out/steady-$size.mtrace"
  rm -f "$out/steady-$size.mtrace"
  if command -v python3 > /dev/null && [[ $commands == *" sites "* || $commands == *" diff-sites "* ]]; then
    recorded="$out/loop-$size.trace"
    # About 1.75 events an iteration (a malloc and a free, and the interpreter's own).
    loop="import random
d = {}
for i in range(int($size * 570000)): d[i % 4000] = bytearray(random.randrange(16, 4096))"
    measure record "$size" "$strata" record --sites -o "$recorded" -- python3 -c "$loop"
    measure sites "$size" "$strata" stats "$recorded" --sites --out "$out/sites-$size"
    measure diff-sites "$size" "$strata" diff "$recorded" "$recorded"
  fi
  measure replay "$size" "$strata" replay "$trace" --allocator glibc --no-write
  measure compare "$size" "$strata" compare "$trace" --allocators glibc,strata --runs 1 --no-plots \
    --out "$out/compare-$size"
  measure report "$size" "$strata" report "$out/compare-$size"
done
