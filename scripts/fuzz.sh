#!/usr/bin/env bash
# Builds Strata's libFuzzer targets with clang (ASan + UBSan, build-fuzz/) and runs them.
#
# usage: scripts/fuzz.sh [TARGET|all] [SECONDS (default 60)]
#   TARGET: any fuzz/<TARGET>_fuzz.cpp; all (the default) runs each, as many at once as there
#   are cores (each fuzzer uses one).
# Each run starts from the seed corpus in fuzz/corpus/<TARGET>/ (the repository's, left as it
# is: new inputs go to build-fuzz/corpus/<TARGET>/) with fuzz/<TARGET>.dict when there is one.
# A finding stops the run with a non-zero exit; the input is in build-fuzz/findings/<TARGET>/
# (minimise it with `build-fuzz/bin/<TARGET>_fuzz -minimize_crash=1 FILE`, fix the bug, add a
# regression test, and put the minimised input into fuzz/corpus/<TARGET>/).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-all}
seconds=${2:-60}
targets=()
for f in fuzz/*_fuzz.cpp; do
  t=${f#fuzz/}
  targets+=("${t%_fuzz.cpp}")
done
if [[ $target != all ]]; then
  found=0
  for t in "${targets[@]}"; do [[ $t == "$target" ]] && found=1; done
  if [[ $found == 0 ]]; then
    echo "fuzz.sh: unknown target '$target' (known: ${targets[*]}, all)" >&2
    exit 2
  fi
  targets=("$target")
fi
if ! [[ $seconds =~ ^[0-9]+$ ]] || [[ $seconds == 0 ]]; then
  echo "fuzz.sh: SECONDS must be a positive number, got '$seconds'" >&2
  exit 2
fi
if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ is needed for libFuzzer (Debian: apt-get install clang)" >&2
  exit 2
fi
# Line tables only (-gline-tables-only): a finding's stack still names files and lines, and
# each file compiles in about a tenth less time than with full debug information.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG" \
  -DSTRATA_BUILD_TESTS=OFF -DSTRATA_BUILD_BENCH=OFF -DSTRATA_BUILD_FUZZ=ON -DSTRATA_WERROR=ON \
  -DSTRATA_SANITIZE=address,undefined,fuzzer-no-link >/dev/null
cmake --build build-fuzz --target "${targets[@]/%/_fuzz}"
# One target's run; its exit status is the fuzzer's.
fuzz_one() {
  local t=$1 corpus=build-fuzz/corpus/$1 findings=build-fuzz/findings/$1 rss=2048
  mkdir -p "$corpus" "$findings"
  local dict=()
  [[ -f fuzz/$t.dict ]] && dict=(-dict="fuzz/$t.dict")
  # The RSS limit catches an input that makes memory resident it should not. malloc_shim's
  # three heaps live for the whole run and keep what they were given (Kingsley's library
  # never gives memory back, by design): its baseline grows to about 2 GiB over hundreds of
  # thousands of inputs, so its limit is 1 GiB higher.
  [[ $t == malloc_shim ]] && rss=3072
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    "build-fuzz/bin/${t}_fuzz" "$corpus" "fuzz/corpus/$t" "${dict[@]}" \
    -max_total_time="$seconds" -rss_limit_mb=$rss -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$findings/" >"build-fuzz/$t.log" 2>&1
}
# Each fuzzer runs on one core: as many run at once as there are cores, each for SECONDS.
jobs=$(nproc)
for ((i = 0; i < ${#targets[@]}; i += jobs)); do
  batch=("${targets[@]:i:jobs}")
  pids=()
  for t in "${batch[@]}"; do
    echo "fuzz.sh: $t for ${seconds}s"
    fuzz_one "$t" &
    pids+=($!)
  done
  failed=0
  for k in "${!batch[@]}"; do
    t=${batch[k]}
    status=0
    wait "${pids[k]}" || status=$?
    tail -n 12 "build-fuzz/$t.log"
    if [[ $status != 0 ]]; then
      echo "fuzz.sh: $t found a problem (exit $status); the input is in build-fuzz/findings/$t/" >&2
      failed=1
    fi
  done
  ((failed == 0)) || exit 1
done
echo "fuzz.sh: no findings"
