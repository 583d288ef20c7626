#!/usr/bin/env bash
# Installs Strata from BUILD_DIR into a scratch prefix, then builds and runs a consumer twice:
# once through find_package(strata), once through pkg-config; then the installed `strata build`.
set -euo pipefail
build_dir=$1
src_dir=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$src_dir" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer"
echo "find_package consumer: ok"
PKG_CONFIG_PATH="$work/prefix/share/pkgconfig" pkg-config --exists strata
# shellcheck disable=SC2046
c++ $(PKG_CONFIG_PATH="$work/prefix/share/pkgconfig" pkg-config --cflags --libs strata) \
  "$src_dir/main.cpp" -o "$work/pc-consumer"
"$work/pc-consumer"
echo "pkg-config consumer: ok"
# The installed `strata build` compiles against the installed headers, not the source tree.
out=$(env -u STRATA_INCLUDE_DIR "$work/prefix/bin/strata" build --verbose \
  'strata::LockedHeap<strata::SpinLock, strata::KingsleyHeap<strata::MmapHeap>>' -o "$work/libbuilt.so" 2>&1)
grep -q -- "-I$work/prefix/include " <<<"$out" || { echo "strata build did not use the installed headers:"; echo "$out"; exit 1; }
echo "strata build with the installed headers: ok"
