#!/usr/bin/env bash
# Installs what Strata needs on Debian 12, only what is missing. Safe to run again.
# (binutils: addr2line, which names the source lines of allocation sites; libzstd-dev and
# zlib1g-dev: `strata import --from heaptrack` reads compressed recordings; heaptrack, and zstd
# that it compresses with when present: that import's tests record a program with it;
# libunwind8: `strata record --sites` walks stacks with its cached unwinder when present;
# time: /usr/bin/time, which bench/long_run.sh reads each command's peak RSS with.)
set -euo pipefail
pkgs=(cmake ninja-build g++ make pkg-config libgtest-dev libgmock-dev libbenchmark-dev valgrind
  libapr1-dev libtalloc-dev libmimalloc-dev libjemalloc-dev libgoogle-perftools-dev
  python3 python3-matplotlib perl git sqlite3 clang libclang-rt-14-dev binutils
  libzstd-dev zlib1g-dev heaptrack zstd libunwind8 time)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  echo "strata setup: installing ${missing[*]}" >&2
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y "${missing[@]}"
fi
