#!/usr/bin/env bash
# Sets up, builds, and runs Strata's main job: the general-purpose allocator table
# (KingsleyHeap, Kingsley + coalescing, LeaHeap and glibc malloc on four workloads).
# Arguments are passed to bench/gp_table (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target gp_table >/dev/null
exec build/bin/gp_table "$@"
