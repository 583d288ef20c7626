#!/usr/bin/env bash
# Sets up, builds and runs the tests.
#
# usage: scripts/test.sh                      every test: the optimised tier, the ASan+UBSan
#                                             tier, then a short run of each libFuzzer target
#        scripts/test.sh --quick [--asan] [--since REV] [LABEL...]
#                                             the fast loop: one tree brought up to date and
#                                             the tests of what a change touches
#
# The whole run builds build/ (Release, shared with scripts/run.sh) and runs every test there,
# builds build-asan/ and runs every test again under AddressSanitizer and
# UndefinedBehaviorSanitizer (scripts/build_tree.sh), then runs each fuzz target for 30 s.
# Warnings are errors when STRATA_WERROR=ON is in the environment (CI sets it).
#
# --quick builds build/ (build-asan/ with --asan; never the fuzz targets) and runs the CTest
# labels of the LABELs given, or else of the files changed since REV (default HEAD: the
# uncommitted change, new files included), as scripts/changed_labels.sh maps them: layers/
# and its tests run "layers"; a toolkit component or its tests folder runs that component's
# label and those of every component listed after it (which may use it); bench/ runs
# "bench"; the build files, scripts/ and tests/common/ run everything; docs run nothing.
# `ctest --print-labels` in build/ lists the labels.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0 asan=0 since=HEAD labels=() named=0
while (($#)); do
  case $1 in
    --quick) quick=1 ;;
    --asan) asan=1 ;;
    --since)
      [[ $# -ge 2 ]] || { echo "test.sh: --since needs a revision" >&2; exit 2; }
      since=$2
      shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "test.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) labels+=("$1") named=1 ;;
  esac
  shift
done
if ((!quick)) && { ((asan)) || [[ $since != HEAD ]] || ((${#labels[@]})); }; then
  echo "test.sh: --asan, --since and labels go with --quick (see --help)" >&2
  exit 2
fi
if ((quick)) && ! git rev-parse --verify -q "$since^{commit}" >/dev/null; then
  echo "test.sh: --since: '$since' is not a revision of this checkout" >&2
  exit 2
fi

bash scripts/setup.sh
# Chromium, Node.js and playwright-core for the tests that open report.html in a browser.
bash scripts/setup_browser.sh
# shellcheck source=build_tree.sh
source scripts/build_tree.sh
jobs=$(nproc)
# setup.sh installed every dependency: a test that finds one missing fails instead of skipping.
export STRATA_REQUIRE_DEPS=1
asan_env=(env ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1)

if ((quick)); then
  if ((!${#labels[@]})); then
    mapfile -t labels < <({ git diff --name-only "$since" -- &&
      git ls-files --others --exclude-standard; } | bash scripts/changed_labels.sh)
    if ((!${#labels[@]})); then
      echo "test.sh --quick: no file changed since $since touches a test;" \
        "name LABELs or --since REV" >&2
      exit 0
    fi
  fi
  if ((asan)); then
    tree=build-asan
    configure_asan_build >/dev/null
  else
    tree=build
    configure_build >/dev/null
  fi
  cmake --build "$tree" -j "$jobs"
  # The labels the tree's tests carry: a label named that none carries is an error; one a
  # change maps to that none carries (a component without tests of its own) is dropped.
  known=$(cd "$tree" && ctest --print-labels | sed -n 's/^  //p')
  kept=()
  for label in "${labels[@]}"; do
    if [[ $label == '*' ]] || grep -qxF "$label" <<<"$known"; then
      kept+=("$label")
    elif ((named)); then
      echo "test.sh --quick: no test carries the label '$label' (known: ${known//$'\n'/ })" >&2
      exit 2
    fi
  done
  if ((!${#kept[@]})); then
    echo "test.sh --quick: no test carries a label of the change (${labels[*]})" >&2
    exit 0
  fi
  labels=("${kept[@]}")
  filter=()
  if ! printf '%s\n' "${labels[@]}" | grep -qx '\*'; then
    filter=(-L "^($(IFS='|'; echo "${labels[*]}"))\$")
    echo "test.sh --quick: labels ${labels[*]} in $tree/"
  else
    echo "test.sh --quick: every test in $tree/"
  fi
  runner=()
  ((asan)) && runner=("${asan_env[@]}")
  (cd "$tree" && "${runner[@]}" ctest --output-on-failure -j "$jobs" "${filter[@]}")
  exit
fi

# Each step's time, printed at the end.
step_names=() step_times=()
timed() {
  local name=$1 t0=$SECONDS
  shift
  "$@"
  step_names+=("$name")
  step_times+=($((SECONDS - t0)))
}
in_dir() { (cd "$1" && shift && "$@"); }
build_main() { configure_build && cmake --build build -j "$jobs"; }
build_asan() { configure_asan_build && cmake --build build-asan -j "$jobs"; }

timed "build build/ (Release)" build_main
timed "the tests in build/" in_dir build ctest --output-on-failure -j "$jobs"
timed "build build-asan/ (ASan+UBSan)" build_asan
timed "the tests in build-asan/" in_dir build-asan "${asan_env[@]}" \
  ctest --output-on-failure -j "$jobs"
# The libFuzzer targets (clang, ASan + UBSan): a short smoke run of each on its seed corpus;
# scripts/fuzz.sh TARGET SECONDS runs one for longer.
timed "build and run the fuzz targets (30 s each)" bash scripts/fuzz.sh all 30

echo
echo "test.sh: where the time went"
for i in "${!step_names[@]}"; do
  printf '  %-45s %6d s\n' "${step_names[i]}" "${step_times[i]}"
done
