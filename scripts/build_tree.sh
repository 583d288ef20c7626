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

# strata_configure TREE CMAKE_ARG...: TREE configured from the checkout with Ninja, and
# STRATA_WERROR as above.
strata_configure() {
  local tree=$1 werror=()
  shift
  [[ -z ${STRATA_WERROR:-} ]] || werror=("-DSTRATA_WERROR=$STRATA_WERROR")
  cmake -S . -B "$tree" -G Ninja "${werror[@]}" "$@"
}

configure_build() { strata_configure build -DCMAKE_BUILD_TYPE=Release "$@"; }

configure_asan_build() {
  strata_configure build-asan -DCMAKE_BUILD_TYPE=Debug -DSTRATA_BUILD_BENCH=OFF \
    -DSTRATA_SANITIZE=address,undefined -DCMAKE_C_FLAGS_DEBUG=-g1 \
    "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" "$@"
}
