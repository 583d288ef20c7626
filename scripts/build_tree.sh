# shellcheck shell=bash
# The build trees the project's scripts share, configured here alone so that no script
# compiles again what another has built (sourced, from the checkout's root, by run.sh, test.sh,
# soak.sh and suites.sh):
#   build/       Release: the one optimised tree. The main job (run.sh), the tests, the
#                benchmarks and CI's install and package checks all use it.
#   build-asan/  Debug at -O1 under AddressSanitizer and UndefinedBehaviorSanitizer, with line
#                tables only (-g1: a report still names files and lines), no benchmarks.
# Warnings are errors in both when STRATA_WERROR=ON is in the environment, as CI sets it;
# otherwise a user's compiler never decides whether Strata builds.
# Extra arguments go to cmake.

configure_build() {
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DSTRATA_WERROR="${STRATA_WERROR:-OFF}" "$@"
}

configure_asan_build() {
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSTRATA_BUILD_BENCH=OFF \
    -DSTRATA_WERROR="${STRATA_WERROR:-OFF}" -DSTRATA_SANITIZE=address,undefined \
    -DCMAKE_C_FLAGS_DEBUG=-g1 "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" "$@"
}
