#!/usr/bin/env bash
# CI: Strata built as packagers and most users build it, and installed as users install it.
#  1. A Release build of the default targets with warnings as errors: build/, which the main
#     job and the tests built before (scripts/build_tree.sh; CI sets STRATA_WERROR=ON). It is
#     checked to be one, then brought up to date (nothing is left to compile).
#  2. `cmake --install` into a temporary prefix; the installed `strata` must find every file
#     it needs (strata doctor) and judge the allocators on a program (compare -- COMMAND).
#  3. The Debian package (cmake --build build --target package): unpacked, the same
#     checks from its /usr tree; and, run as root on CI, installed with apt-get, the checks
#     again from /usr/bin/strata and the main job (`strata compare`), then removed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
jobs=$(nproc)

step() {
  local name=$1
  shift
  echo "release: $name"
  if ! "$@" >"$work/log" 2>&1; then
    tail -n 60 "$work/log"
    echo "FAILED: $name"
    exit 1
  fi
}

# The installed command at $1 (a bin/strata) finds its files and judges the allocators on a
# program that allocates (perl building a list of strings), live and replayed.
check_installed() {
  local strata=$1 where=$2
  step "strata doctor ($where)" "$strata" doctor
  step "strata compare -- perl ($where)" bash -c "cd '$work' && '$strata' compare --runs 1 \
    --no-plots --out '$work/compare' --allocators glibc,strata,strata-lea -- \
    perl -e 'my @a = map { \"x\" x (\$_ % 4000) } 1 .. 20000; print scalar(@a), qq(\n)'"
  grep -q "allocator" "$work/compare/report.txt" || {
    cat "$work/compare/report.txt"
    echo "FAILED: no table from the installed strata ($where)"
    exit 1
  }
}

# The tree's own record of how it was configured, not the scripts' word for it.
cache_value() { sed -n "s/^$1:[A-Z]*=//p" build/CMakeCache.txt; }
if [[ ! -f build/CMakeCache.txt || $(cache_value CMAKE_BUILD_TYPE) != Release ||
      $(cache_value STRATA_WERROR) != ON || -n $(cache_value STRATA_SANITIZE) ]]; then
  echo "FAILED: build/ is not a Release build with warnings as errors (STRATA_WERROR=ON)"
  exit 1
fi
step "build the default targets (Release, warnings as errors)" cmake --build build -j "$jobs"

step "cmake --install into a temporary prefix" cmake --install build --prefix "$work/prefix"
check_installed "$work/prefix/bin/strata" "installed prefix"

step "the Debian package" cmake --build build --target package
deb=$(ls build/strata_*.deb)
echo "release: $deb"
dpkg-deb --field "$deb" Package Version Installed-Size Depends Recommends
step "unpack the package" dpkg-deb -x "$deb" "$work/unpacked"
check_installed "$work/unpacked/usr/bin/strata" "unpacked package"

if [[ ${CI:-} == true && $(id -u) == 0 ]]; then
  step "apt-get install the package" env DEBIAN_FRONTEND=noninteractive apt-get install -y "$root/$deb"
  check_installed /usr/bin/strata "/usr, from the package"
  # The main job as an installed user types it: `strata compare`, the bundled workloads.
  step "strata compare, the main job (/usr, from the package)" \
    bash -c "cd '$work' && strata compare --out '$work/main-job'"
  bash .ci/check_tables.sh "$work/main-job/report.txt"
  step "apt-get remove the package" env DEBIAN_FRONTEND=noninteractive apt-get remove -y strata
fi
echo "release: Release build, install and package checked"
