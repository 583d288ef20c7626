#!/usr/bin/env bash
# Sets up, builds, and runs Strata's main job: `strata compare` on the bundled workloads
# (a web-proxy cache, an editor, a server with per-request scratch memory), replaying each
# trace on every allocator strata knows (glibc, jemalloc, mimalloc, tcmalloc and Strata's own
# libraries) and printing one table per workload, with plots in ./strata-compare/.
# Arguments are passed to `strata compare` (try --help; e.g. `-- ./your-program args` records
# your own program, judges the allocators on every process of it, and runs it live on each).
# Results go to ./strata-compare in the directory it is run from, where a recorded program's
# relative path is also resolved.
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/.."
root=$PWD
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
targets=(strata_cli strata_malloc_kingsley strata_malloc_lea strata_malloc strata_record)
cmake --build build -j "$(nproc)" --target "${targets[@]}" >/dev/null
cd "$caller"
exec "$root/build/bin/strata" compare "$@"
