#!/usr/bin/env bash
# Replays the benchmark traces of bench/traces on allocators with `strata compare --no-live`:
# decompresses each NAME.trace.xz into a scratch directory and compares on all of them in one
# run, writing the tables (report.txt) and results.json to OUT (README.md).
#   bench/traces/compare.sh [-s STRATA] [-a ALLOCATORS] [-r RUNS] [-o OUT] [NAME...] [-- OPTION...]
#     -s STRATA      the strata binary (default: build/bin/strata of the repository)
#     -a ALLOCATORS  comma-separated allocator specs (default: every one `strata allocators` lists)
#     -r RUNS        replays per allocator and trace, the median shown (default 3)
#     -o OUT         where the results go (default ./traces-compare)
#     NAME...        which traces (emacs python3 perl cc1plus; default all of bench/traces)
#     -- OPTION...   more options for strata compare (plots are off unless given --plots)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "${here}/../.." && pwd)"
strata="${root}/build/bin/strata"
allocators=""
runs=3
out="traces-compare"
plots=0
names=()
extra=()

while [ "$#" -gt 0 ]; do
  case "$1" in
    -s) strata="$2"; shift 2 ;;
    -a) allocators="$2"; shift 2 ;;
    -r) runs="$2"; shift 2 ;;
    -o) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "compare.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) names+=("$1"); shift ;;
  esac
done
[ -x "${strata}" ] || { echo "compare.sh: no strata at ${strata} (-s PATH)" >&2; exit 2; }
for opt in "${extra[@]+"${extra[@]}"}"; do [ "${opt}" = "--plots" ] && plots=1; done

if [ "${#names[@]}" -eq 0 ]; then
  for f in "${here}"/*.trace.xz; do names+=("$(basename "${f}" .trace.xz)"); done
fi

work="$(mktemp -d /tmp/strata-traces-compare.XXXXXX)"
trap 'rm -rf "${work}"' EXIT
traces=()
for name in "${names[@]}"; do
  [ -f "${here}/${name}.trace.xz" ] || { echo "compare.sh: no ${here}/${name}.trace.xz" >&2; exit 2; }
  xz -dc "${here}/${name}.trace.xz" >"${work}/${name}.trace"
  traces+=("${work}/${name}.trace")
done

args=(compare "${traces[@]}" --no-live --runs "${runs}" --out "${out}")
[ -n "${allocators}" ] && args+=(--allocators "${allocators}")
[ "${plots}" -eq 1 ] || args+=(--no-plots)
for opt in "${extra[@]+"${extra[@]}"}"; do [ "${opt}" = "--plots" ] || args+=("${opt}"); done
echo "compare.sh: ${strata} ${args[*]}" >&2
"${strata}" "${args[@]}"
