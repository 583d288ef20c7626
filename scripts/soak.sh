#!/usr/bin/env bash
# Soak and fault runs of Strata's drop-in malloc libraries (not part of CI or ctest).
#
# usage: scripts/soak.sh [--parallel] [MINUTES (default 30)] [LIBRARY...]
#   LIBRARY: strata, strata-kingsley, strata-lea (default: all three; lib*.so in build/lib).
#   --parallel: every run at once instead of one after the other (each gets a share of the
#   cores, so fewer operations, but the whole soak takes MINUTES plus the pressure runs).
# Builds malloc_soak (bench/soak/) and the libraries in build/, then, one library after the
# other (each run has 8 threads of its own), runs malloc_soak under each by LD_PRELOAD and
# under glibc as the reference: the normal mix for MINUTES minutes, then --pressure (a tight
# RLIMIT_AS) for a tenth of that (at least 20 s, at most 5 minutes). Logs and the RSS samples
# (one line a second: seconds, RSS KiB, LazyFree KiB, address space KiB, operations) go to
# build/soak/<lib>.log, <lib>.rss and <lib>.pressure.log. Prints a table and exits non-zero
# if any run failed. The runs are niced; a 30-minute soak of all four takes about 2 hours
# 15 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
parallel=0
if [[ ${1:-} == --parallel ]]; then
  parallel=1
  shift
fi
minutes=${1:-30}
if ! [[ $minutes =~ ^[0-9]+$ ]] || [[ $minutes == 0 ]]; then
  echo "soak.sh: MINUTES must be a positive whole number, got '$minutes'" >&2
  exit 2
fi
shift || true
libs=("$@")
[[ ${#libs[@]} == 0 ]] && libs=(strata strata-kingsley strata-lea)
declare -A target=([strata]=strata_malloc [strata-kingsley]=strata_malloc_kingsley
                   [strata-lea]=strata_malloc_lea)
targets=(malloc_soak)
for lib in "${libs[@]}"; do
  if [[ -z ${target[$lib]:-} ]]; then
    echo "soak.sh: unknown library '$lib' (known: strata, strata-kingsley, strata-lea)" >&2
    exit 2
  fi
  targets+=("${target[$lib]}")
done

if [[ ! -f build/CMakeCache.txt ]]; then
  # shellcheck source=build_tree.sh
  source scripts/build_tree.sh
  configure_build >/dev/null
fi
nice cmake --build build -j1 --target "${targets[@]}" >/dev/null
mkdir -p build/soak

seconds=$((minutes * 60))
pressure=$((seconds / 10))
((pressure < 20)) && pressure=20
((pressure > 300)) && pressure=300

# The value of key in a result line ("-" if absent).
field() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" <<<"$2" | head -n1 | grep . || echo -; }
mib() { [[ $1 == - ]] && echo - || echo $(($1 / 1024)); }

# One library's two runs; its row of the table goes to build/soak/<lib>.row.
soak_one() {
  local lib=$1 preload status pstatus normal press verdict
  preload=
  [[ $lib != glibc ]] && preload=$PWD/build/lib/lib$lib.so
  echo "soak.sh: $lib: ${minutes} min normal, ${pressure} s pressure" >&2
  status=0
  LD_PRELOAD=$preload nice build/bin/malloc_soak --seconds "$seconds" --rss "build/soak/$lib.rss" \
    >"build/soak/$lib.log" 2>&1 || status=$?
  pstatus=0
  LD_PRELOAD=$preload nice build/bin/malloc_soak --pressure --seconds "$pressure" \
    >"build/soak/$lib.pressure.log" 2>&1 || pstatus=$?
  normal=$(grep '^soak-result' "build/soak/$lib.log" || true)
  press=$(grep '^soak-result' "build/soak/$lib.pressure.log" || true)
  verdict=ok
  if ((status != 0 || pstatus != 0)) || [[ -z $normal || -z $press ]]; then
    verdict="FAIL(normal $status, pressure $pstatus)"
  fi
  printf '%-16s %4s %12s %6s %9s %9s %9s %9s %12s %s' "$lib" "$minutes" \
    "$(field ops "$normal")" "$(field forks "$normal")" "$(mib "$(field peak_rss_kib "$normal")")" \
    "$(mib "$(field first_used_kib "$normal")")" "$(mib "$(field last_used_kib "$normal")")" \
    "$(field enomem "$press")" "$(field recovered "$press")" "$verdict" >"build/soak/$lib.row"
}

pids=()
for lib in glibc "${libs[@]}"; do
  rm -f "build/soak/$lib.row"
  if ((parallel)); then
    soak_one "$lib" &
    pids+=($!)
  else
    soak_one "$lib"
  fi
done
for pid in "${pids[@]}"; do wait "$pid"; done
rows=()
failed=0
for lib in glibc "${libs[@]}"; do
  row=$(cat "build/soak/$lib.row" 2>/dev/null || true)
  [[ -z $row ]] && row="$lib (no result)"
  [[ $row == *FAIL* || $row == *"no result"* ]] && failed=1
  rows+=("$row")
done

printf '%-16s %4s %12s %6s %9s %9s %9s %9s %12s %s\n' library min ops forks peak_MiB \
  first_MiB last_MiB p_enomem p_recovered verdict
printf '%s\n' "${rows[@]}"
echo "(first/last: peak in use, RSS - LazyFree, of the first and last tenth; p_: the pressure" \
  "run; logs in build/soak/)"
exit $failed
