#!/usr/bin/env bash
# Installs Strata from BUILD_DIR into a scratch prefix, as a user would, then uses every
# installed library from outside:
#  - through find_package(strata): the consumer project in this folder (CMakeLists.txt) builds
#    a program for every exported target (it fails if one is left out) and two malloc
#    libraries made with strata_add_malloc_library; its CTest tests run them all. A C-only
#    project (c_only/) does the same for the C libraries with no C++ compiler enabled;
#  - through pkg-config: every installed .pc file (it fails if one is left out), the C
#    libraries from C programs built with cc, shared and fully static (pkg-config --static);
#  - the installed `strata build`, which must compile against the installed headers.
# Usage: check.sh BUILD_DIR [LIBDIR (CMAKE_INSTALL_LIBDIR, default lib)] [SANITIZERS] [WERROR]
# WERROR (ON or OFF, STRATA_WERROR of the build): the consumers' warnings are errors too.
# SANITIZERS (STRATA_SANITIZE of the build, e.g. address,undefined): the installed libraries
# are instrumented, so every consumer is built with -fsanitize too; the checks of whose malloc
# the process has are not run (the sanitizer's comes first), nor the -static links (ASan
# cannot link statically).
# On failure it prints the failing step's output and "FAILED: <step>".
# shellcheck disable=SC2046  # pkg-config's output is meant to be split into words
set -euo pipefail
build_dir=$1
libdir=${2:-lib}
sanitize=${3:-}
werror=${4:-OFF}
san_flags=()
cmake_san=()
if [[ -n $sanitize ]]; then
  san_flags=(-fsanitize="$sanitize" -fno-omit-frame-pointer)
  cmake_san=(-DCMAKE_C_FLAGS="${san_flags[*]}" -DCMAKE_CXX_FLAGS="${san_flags[*]}"
    -DCMAKE_EXE_LINKER_FLAGS=-fsanitize="$sanitize"
    -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize="$sanitize" -DRUN_MALLOC_CHECKS=OFF)
fi
src_dir=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

# step NAME COMMAND...: runs COMMAND, its output kept in a log; on failure prints the log and
# the step's name and exits 1. run NAME COMMAND...: the same, and prints the output.
step() {
  local name=$1
  shift
  if ! "$@" >"$work/log" 2>&1; then
    cat "$work/log"
    echo "FAILED: $name"
    exit 1
  fi
}
run() {
  step "$@"
  echo "$1:"
  sed 's/^/  /' "$work/log"
}

step "cmake --install" cmake --install "$build_dir" --prefix "$prefix"

# find_package(strata).
step "configure the find_package consumer" \
  cmake -S "$src_dir" -B "$work/consumer" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DWERROR="$werror" -DCMAKE_PREFIX_PATH="$prefix" "${cmake_san[@]}"
step "build the find_package consumer" cmake --build "$work/consumer" -j 2
run "run the find_package consumer's programs" \
  ctest --test-dir "$work/consumer" --output-on-failure
step "configure the C-only find_package consumer" \
  cmake -S "$src_dir/c_only" -B "$work/c_only" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DWERROR="$werror" -DCMAKE_PREFIX_PATH="$prefix" "${cmake_san[@]}"
step "build the C-only find_package consumer" cmake --build "$work/c_only" -j 2
run "run the C-only find_package consumer's programs" \
  ctest --test-dir "$work/c_only" --output-on-failure
echo "find_package consumers: ok"

# pkg-config.
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig:$prefix/share/pkgconfig"
tested=""
pc() {
  step "pkg-config --validate $1" pkg-config --validate "$1"
  tested="$tested $1"
}
pc strata
step "c++ with pkg-config strata" \
  c++ "${san_flags[@]}" "$src_dir/main.cpp" $(pkg-config --cflags --libs strata) -o "$work/pc-layers"
run "run the pkg-config strata program" "$work/pc-layers"
cflags=(-std=c11 -Wall -Wextra -Werror -pedantic "${san_flags[@]}")
for api in reap region obstack; do
  pc "strata-$api"
  step "cc with pkg-config strata-$api" \
    cc "${cflags[@]}" "$src_dir/$api.c" $(pkg-config --cflags --libs "strata-$api") -o "$work/pc-$api"
  run "run the pkg-config strata-$api program (shared)" \
    env LD_LIBRARY_PATH="$prefix/$libdir" "$work/pc-$api"
  if [[ -z $sanitize ]]; then
    step "cc -static with pkg-config --static strata-$api" \
      cc "${cflags[@]}" "$src_dir/$api.c" $(pkg-config --static --cflags --libs "strata-$api") \
      -static -o "$work/pc-$api-static"
    run "run the pkg-config strata-$api program (static)" "$work/pc-$api-static"
  fi
done
for file in "$prefix"/"$libdir"/pkgconfig/*.pc "$prefix"/share/pkgconfig/*.pc; do
  name=$(basename "$file" .pc)
  case " $tested " in
    *" $name "*) ;;
    *) echo "FAILED: installed $file is not tested"; exit 1 ;;
  esac
done
echo "pkg-config consumers:$tested: ok"

# The installed `strata build` compiles against the installed headers, not the source tree.
step "strata build with the installed headers" \
  env -u STRATA_INCLUDE_DIR "$prefix/bin/strata" build --verbose \
  'strata::LockedHeap<strata::SpinLock, strata::KingsleyHeap<strata::MmapHeap>>' -o "$work/libbuilt.so"
grep -q -- "-I$prefix/include " "$work/log" || { cat "$work/log"; echo "FAILED: strata build did not use the installed headers"; exit 1; }
echo "strata build with the installed headers: ok"
