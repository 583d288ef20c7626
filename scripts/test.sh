#!/usr/bin/env bash
# Sets up, builds and runs every test: once optimised, once under AddressSanitizer and
# UndefinedBehaviorSanitizer, then a short run of each libFuzzer target. Warnings are errors
# here (STRATA_WERROR), as they are not in a plain cmake build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Chromium, Node.js and playwright-core for the tests that open report.html in a browser.
bash scripts/setup_browser.sh
jobs=$(nproc)
# setup.sh installed every dependency: a test that finds one missing fails instead of skipping.
export STRATA_REQUIRE_DEPS=1

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRATA_WERROR=ON
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure -j "$jobs")

cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSTRATA_BUILD_BENCH=OFF -DSTRATA_WERROR=ON \
  -DSTRATA_SANITIZE=address,undefined -DCMAKE_CXX_FLAGS=-O1
cmake --build build-asan -j "$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 ctest --output-on-failure -j "$jobs")

# The libFuzzer targets (clang, ASan + UBSan): a short smoke run of each on its seed corpus;
# scripts/fuzz.sh TARGET SECONDS runs one for longer.
bash scripts/fuzz.sh all 30
