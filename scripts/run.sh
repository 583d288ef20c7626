#!/usr/bin/env bash
# Sets up, builds, and runs Strata's main job: `strata compare` on the bundled workloads
# (a web-proxy cache, an editor, a server with per-request scratch memory), replaying each
# trace on every allocator strata knows (glibc, jemalloc, mimalloc, tcmalloc and Strata's own
# libraries) and printing one table per workload, with plots in ./strata-compare/.
# Arguments are passed to `strata compare` (try --help; e.g. `-- ./your-program args` records
# your own program, judges the allocators on every process of it, and runs it live on each).
# Results go to ./strata-compare in the directory it is run from, where a recorded program's
# relative path is also resolved.
#
# It builds the CMake target strata_toolkit in build/ (Release, shared with scripts/test.sh:
# scripts/build_tree.sh): the command and every file it starts or loads.
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/.."
root=$PWD
bash scripts/setup.sh
# shellcheck source=build_tree.sh
source scripts/build_tree.sh
mkdir -p build
log=build/run-build.log
echo "strata: building the command and its helpers (log: $root/$log)" >&2
if ! { configure_build &&
       cmake --build build -j "$(nproc)" --target strata_toolkit; } >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "strata: the build failed (the whole log: $root/$log)" >&2
  exit 1
fi
if ! "$root/build/bin/strata" doctor >"build/doctor.txt"; then
  cat build/doctor.txt >&2
  exit 1
fi
cd "$caller"
exec "$root/build/bin/strata" compare "$@"
