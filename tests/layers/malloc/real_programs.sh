#!/usr/bin/env bash
# Runs real programs twice, once on glibc's malloc and once with LD_PRELOAD=LIB, and requires
# identical results: python3 (dicts, strings, JSON), perl (hashes, regexes, sort, sprintf),
# gcc (compiles a generated C file with -O2; the compiled program is run on glibc and its
# output compared), git (init, add, commit, log --stat, repack, fsck on a generated tree of
# 200 files) and sqlite3 (a generated SQL workload). Each run's stdout, stderr and exit status
# are compared; a mismatch prints the head of the diff and the script exits 1.
#
# Usage: real_programs.sh [--allow-missing] LIB
#   --allow-missing  skip a program that is not installed (by default that is an error)
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
allow_missing=0
if [[ "${1:-}" == "--allow-missing" ]]; then
  allow_missing=1
  shift
fi
if [[ $# -ne 1 ]]; then
  echo "usage: real_programs.sh [--allow-missing] LIB" >&2
  exit 2
fi
lib=$(readlink -f "$1" 2>/dev/null)
if [[ -z "$lib" || ! -f "$lib" ]]; then
  echo "real_programs: library '$1' not found" >&2
  exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/strata-real.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
start_all=$SECONDS

# The library must really be loaded: the dynamic loader only warns when a preload fails.
if ! LD_PRELOAD="$lib" cat /proc/self/maps | grep -qF "$lib"; then
  echo "real_programs: FAILED: $lib is not mapped into a process started with LD_PRELOAD" >&2
  LD_PRELOAD="$lib" true
  exit 1
fi

# A clean, fixed environment for every run, so that the two runs differ only in LD_PRELOAD.
export LC_ALL=C TZ=UTC HOME="$work/home"
export PYTHONHASHSEED=0 PYTHONMALLOC=malloc PYTHONDONTWRITEBYTECODE=1
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME="Strata Test" GIT_AUTHOR_EMAIL="test@strata.invalid"
export GIT_COMMITTER_NAME="Strata Test" GIT_COMMITTER_EMAIL="test@strata.invalid"
export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
unset LD_PRELOAD MALLOC_CHECK_ MALLOC_PERTURB_
mkdir -p "$HOME"

# Is program $1 available? Missing ones fail the run unless --allow-missing was given.
have() {
  if command -v "$1" >/dev/null 2>&1; then return 0; fi
  if [[ $allow_missing -eq 1 ]]; then
    echo "real_programs: SKIP $1 (not installed)"
  else
    echo "real_programs: FAILED: $1 is not installed (pass --allow-missing to skip it)" >&2
    failures=$((failures + 1))
  fi
  return 1
}

# compare NAME CMD...: runs CMD (a shell function or program) in a fresh directory, first on
# glibc, then with the library preloaded; compares stdout, stderr and exit status, with the
# run's own directory replaced by DIR (a loader warning on stderr shows as a difference).
compare() {
  local name=$1
  shift
  local mode t0 glibc_secs preload_secs
  for mode in glibc preload; do
    t0=${EPOCHREALTIME/./}
    local dir="$work/$name.$mode"
    mkdir -p "$dir"
    local status=0
    if [[ $mode == glibc ]]; then
      (cd "$dir" && "$@") >"$dir.out" 2>"$dir.err" || status=$?
    else
      (cd "$dir" && STRATA_PRELOAD="$lib" "$@") >"$dir.out" 2>"$dir.err" || status=$?
    fi
    local us=$((${EPOCHREALTIME/./} - t0))
    printf -v "${mode}_secs" '%d.%d' $((us / 1000000)) $((us / 100000 % 10))
    echo "exit status $status" >>"$dir.out"
    sed -e "s|$work/$name.$mode|DIR|g" -i "$dir.out" "$dir.err"
  done
  local a="$work/$name.glibc" b="$work/$name.preload"
  if ! grep -q '^exit status 0$' "$a.out"; then
    echo "real_programs: FAILED: $name fails even on glibc:" >&2
    tail -n 20 "$a.out" "$a.err" >&2
    failures=$((failures + 1))
  elif ! cmp -s "$a.out" "$b.out" || ! cmp -s "$a.err" "$b.err"; then
    echo "real_programs: FAILED: $name differs under LD_PRELOAD=$lib:" >&2
    { diff -u "$a.out" "$b.out"; diff -u "$a.err" "$b.err"; } | head -n 40 >&2
    failures=$((failures + 1))
  else
    echo "real_programs: ok $name (glibc ${glibc_secs} s, preloaded ${preload_secs} s," \
      "$(wc -l <"$a.out") lines compared)"
  fi
}

# run CMD...: runs CMD with the library preloaded when STRATA_PRELOAD is set (only the
# program under test, not the shell around it).
run() {
  if [[ -n "${STRATA_PRELOAD:-}" ]]; then
    LD_PRELOAD="$STRATA_PRELOAD" "$@"
  else
    "$@"
  fi
}

python_job() { run python3 "$here/real/workload.py"; }

perl_job() { run perl "$here/real/workload.pl"; }

# gcc compiles under the allocator (driver, cc1, as, ld); the result always runs on glibc, so
# its output shows whether the compiled code is right.
gcc_job() {
  cp "$work/prog.c" prog.c
  run gcc -O2 -Wall -o prog prog.c
  local status=$?
  echo "gcc exit status $status"
  [[ $status -eq 0 ]] || return 1
  ./prog
}

git_job() {
  cp -r "$work/tree" repo
  cd repo || return 1
  run git -c init.defaultBranch=main init -q . &&
    run git add -A &&
    run git commit -q -m "generated tree" &&
    python3 "$here/real/generate.py" tree-edit . &&
    run git add -A &&
    run git commit -q -m "edited tree" &&
    run git log --stat &&
    run git -c pack.threads=2 repack -a -d -q &&
    run git fsck --full --no-progress &&
    run git ls-tree -r HEAD~1 &&
    run git diff --stat HEAD~1 HEAD &&
    run git count-objects -v | grep -E '^(count|in-pack|packs|garbage):'
}

sqlite_job() { run sqlite3 -batch test.db <"$work/workload.sql"; }

have python3 && compare python3 python_job
have perl && compare perl perl_job
if have gcc; then
  python3 "$here/real/generate.py" c "$work/prog.c"
  compare gcc gcc_job
fi
if have git; then
  mkdir -p "$work/tree"
  python3 "$here/real/generate.py" tree "$work/tree"
  compare git git_job
fi
if have sqlite3; then
  python3 "$here/real/generate.py" sql "$work/workload.sql"
  compare sqlite3 sqlite_job
fi

if [[ $failures -ne 0 ]]; then
  echo "real_programs: FAILED ($failures) with $lib in $((SECONDS - start_all)) s"
  exit 1
fi
echo "real_programs: OK with $lib in $((SECONDS - start_all)) s"
