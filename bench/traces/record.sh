#!/usr/bin/env bash
# Records the benchmark traces of bench/traces from scratch: real Debian programs whose heaps
# fragment (an Emacs editing session, python3 and perl building and dropping structures in
# phases, the C++ compiler cc1plus), each with `strata record --clock coarse`, and writes
# them compressed as bench/traces/NAME.trace.xz, with bench/traces/recorded.txt saying when,
# with which program versions and which exact command each was made (README.md).
# Installs what is missing from Debian (emacs-nox, python3, perl, g++, xz-utils) with
# apt-get, as root or through sudo.
#   bench/traces/record.sh [STRATA]     (default STRATA: build/bin/strata of the repository)
# The coarse clock stamps events with CLOCK_MONOTONIC_COARSE: the replay does not use the
# time stamps of a one-thread trace, and the repeated stamps compress several times better.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "${here}/../.." && pwd)"
strata="${1:-${root}/build/bin/strata}"
[ -x "${strata}" ] || { echo "record.sh: no strata at ${strata} (build the CMake targets strata_cli strata_record, or pass its path)" >&2; exit 2; }
strata="$(cd "$(dirname "${strata}")" && pwd)/$(basename "${strata}")"

# shellcheck source=../../scripts/as_root.sh
source "${root}/scripts/as_root.sh"

missing=()
command -v emacs >/dev/null 2>&1 || missing+=(emacs-nox)
[ -x /usr/bin/python3 ] || missing+=(python3)
[ -x /usr/bin/perl ] || missing+=(perl)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v xz >/dev/null 2>&1 || missing+=(xz-utils)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "record.sh: installing ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi

# A fixed-length scratch path, so file names the programs allocate are the same length.
work="$(mktemp -d /tmp/strata-traces.XXXXXX)"
trap 'rm -rf "${work}"' EXIT
log="${work}/recorded.txt"
{
  echo "# Written by bench/traces/record.sh; see README.md."
  echo "recorded:  $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -srm)"
  echo "strata:    ${strata#"${root}/"} (repository at $(git -C "${root}" rev-parse --short HEAD 2>/dev/null || echo unknown))"
} >"${log}"

version_of() { dpkg-query -W -f='${Package} ${Version}' "$1" 2>/dev/null || echo "$1 (version unknown)"; }
# The Debian package that holds cc1plus (g++-12 on Debian 12), for its version.
cc1plus_package="$(dpkg -S "$(g++ -print-prog-name=cc1plus)" 2>/dev/null | cut -d: -f1 || true)"

# record NAME PACKAGE COMMAND...: records COMMAND into ${work}/NAME.trace (children, if any,
# into NAME.trace.<pid>), from the repository's root.
record() {
  local name="$1" package="$2"
  shift 2
  echo "record.sh: recording ${name}: $*"
  (cd "${root}" && "${strata}" record --clock coarse -o "${work}/${name}.trace" -- "$@") \
    >"${work}/${name}.out" 2>"${work}/${name}.err" \
    || { cat "${work}/${name}.err" >&2; echo "record.sh: ${name} failed" >&2; exit 1; }
  {
    echo
    echo "${name}: $(version_of "${package}")"
    echo "  command: (from the repository root; SCRATCH is record.sh's scratch directory)"
    echo "           strata record --clock coarse -o ${name}.trace -- $*" \
      | sed "s|${work}|SCRATCH|g; s|${root}/||g"
    [ -s "${work}/${name}.out" ] && echo "  output:  $(tail -n 1 "${work}/${name}.out")"
    grep '^strata record:' "${work}/${name}.err" | sed "s|${work}/||; s|^|  |"
  } >>"${log}"
}

# 1. Emacs: a batch editing session over a scratch copy of toolkit/ and layers/ sources.
mkdir -p "${work}/src"
cp -rL "${root}/toolkit" "${root}/layers" "${work}/src/"
find "${work}/src" -type f ! -name '*.cpp' ! -name '*.hpp' ! -name '*.h' -delete
[ -n "$(find "${work}/src" -type f -print -quit)" ] \
  || { echo "record.sh: no C++ sources copied from ${root}" >&2; exit 1; }
record emacs emacs-nox emacs -Q --batch -l "${here}/emacs_edit.el" "${work}/src" 5 4

# 2. python3 with every object through malloc, string hashing fixed so that dict layouts are
# the same from run to run. `env` execs python3: its trace starts afresh at the exec.
record python3 python3 /usr/bin/env PYTHONMALLOC=malloc PYTHONHASHSEED=0 /usr/bin/python3 \
  "${here}/py_phases.py" 2

# 3. perl, with its hash seed and key order fixed likewise.
record perl perl /usr/bin/env PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 /usr/bin/perl \
  "${here}/pl_phases.pl" 2

# 4. The C++ compiler on this repository's largest translation unit. g++ runs cc1plus and
# as as children; their traces are g++.trace.<pid>, and cc1plus's is the one kept.
record g++ "${cc1plus_package:-g++}" g++ -std=c++20 -O2 -Ilayers/include -Itoolkit/trace/include -Itoolkit/replay \
  -Itoolkit/registry -Itoolkit/support -Itoolkit/tracetools -c toolkit/replay/engine.cpp \
  -o "${work}/engine.o"
cc1plus_trace=""
for t in "${work}"/g++.trace.*; do
  if "${strata}" stats "${t}" | grep -q '^ *program .*/cc1plus '; then cc1plus_trace="${t}"; fi
done
[ -n "${cc1plus_trace}" ] || { echo "record.sh: no cc1plus trace among g++'s children" >&2; exit 1; }
mv "${cc1plus_trace}" "${work}/cc1plus.trace"
echo "  kept:    cc1plus.trace = $(basename "${cc1plus_trace}") (the cc1plus child)" >>"${log}"

for name in emacs python3 perl cc1plus; do
  echo "record.sh: compressing ${name}.trace"
  xz -6 -T1 -c "${work}/${name}.trace" >"${here}/${name}.trace.xz"
  echo "${name}.trace: $(stat -c %s "${work}/${name}.trace") bytes, xz $(stat -c %s "${here}/${name}.trace.xz") bytes" >>"${log}"
done
cp "${log}" "${here}/recorded.txt"
cat "${here}/recorded.txt"
