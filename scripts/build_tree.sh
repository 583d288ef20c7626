# shellcheck shell=bash
# The build trees the project's scripts share, configured here alone so that no script
# compiles again what another has built (sourced, from the checkout's root, by run.sh, test.sh,
# soak.sh and suites.sh):
#   build/       Release: the one optimised tree. The main job (run.sh), the tests, the
#                benchmarks and CI's install and package checks all use it.
#   build-asan/  Debug at -O1 under AddressSanitizer and UndefinedBehaviorSanitizer, with line
#                tables only (-g1: a report still names files and lines), no benchmarks.
# Warnings are errors in both when STRATA_WERROR=ON is in the environment, as CI sets it, and
# not when it is OFF; unset, a tree keeps what it was configured with (off in a new one), so
# that running a script without it never recompiles a tree built with it. A user's compiler
# never decides whether Strata builds unless asked to.
# Extra arguments go to cmake.

strata_werror_flag() {
  if [[ -n ${STRATA_WERROR:-} ]]; then echo "-DSTRATA_WERROR=$STRATA_WERROR"; fi
}

configure_build() {
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release $(strata_werror_flag) "$@"
}

configure_asan_build() {
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSTRATA_BUILD_BENCH=OFF \
    $(strata_werror_flag) -DSTRATA_SANITIZE=address,undefined \
    -DCMAKE_C_FLAGS_DEBUG=-g1 "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" "$@"
}
