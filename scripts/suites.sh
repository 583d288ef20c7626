#!/usr/bin/env bash
# Runs other people's test suites with Strata's drop-in malloc libraries preloaded and holds
# each result against the same suite under the C library's malloc. Not part of CI: it takes
# a quarter of an hour or more for all libraries.
#
#   scripts/suites.sh [SUITE...] [--libraries NAME,...]
#
# Suites (default: both):
#   python  CPython's own regression tests (Debian's libpython3.11-testsuite, installed when
#           missing), modules that work memory hard, run twice per allocator: with
#           PYTHONMALLOC=malloc, so that every object, however small, comes from the preloaded
#           malloc, and with CPython's default pymalloc, the way Python is normally run (small
#           objects then come from pymalloc's own mmap'd arenas and malloc sees the rest).
#           Passes when every module and every test case ends as it does under glibc.
#   build   compiles part of Strata itself (libraries and some tests; C++ heavy on templates
#           and GoogleTest) in build/suites/tree with ninja, the compiler driver, cc1plus, the
#           assembler and the linker all under the allocator. Compilation is deterministic, so
#           it passes when every object, library and program is byte-identical to glibc's.
# Libraries: strata (libstrata.so), kingsley, lea, secure, or a path to any malloc library
# (named in the table and the logs by its file: libfoo.so is libfoo); default all three
# Strata libraries, built in build/lib when missing.
# Prints a table, keeps logs in build/suites/, exits 1 when any library differs from glibc.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/build/suites
python=/usr/bin/python3.11
modules=(test_dict test_list test_unicode test_json test_pickle test_re test_threading test_gc
  test_set test_bytes test_array test_deque test_mmap test_tuple test_weakref test_struct
  test_itertools test_sort test_collections test_io test_memoryview test_ordered_dict
  test_marshal test_zlib test_long test_decimal test_descr test_codecs test_hashlib
  test_heapq test_ctypes test_subprocess test_exceptions)
build_targets=(strata_malloc strata_malloc_kingsley strata_malloc_lea strata_reap strata_region
  strata_obstack strata_tracetools page_queues_test differential_harness_test malloc_shim_test
  thread_heap_test)

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
die() { echo "suites: $*" >&2; exit 2; }

suites=() libraries=strata,kingsley,lea
while (($#)); do
  case $1 in
    python|build) suites+=("$1") ;;
    --libraries) (($# > 1)) || die "--libraries needs a list, e.g. strata,lea"; libraries=$2; shift ;;
    --libraries=*) libraries=${1#*=} ;;
    -h|--help) usage 0 ;;
    *) echo "suites: unknown argument '$1' (suites: python build; option --libraries)" >&2; usage 2 ;;
  esac
  shift
done
((${#suites[@]})) || suites=(python build)

# Allocator name -> library path ("" for glibc).
declare -A lib_of=([glibc]="")
allocators=(glibc)
need_build=()
IFS=, read -ra names <<<"$libraries"
for n in "${names[@]}"; do
  case $n in
    strata) lib_of[$n]=$root/build/lib/libstrata.so; need_build+=(strata_malloc) ;;
    kingsley|lea|secure) lib_of[$n]=$root/build/lib/libstrata-$n.so; need_build+=(strata_malloc_$n) ;;
    */*) [ -f "$n" ] || die "no library at '$n'"
      # Named by its file (libfoo.so: libfoo), which the logs and the table use; a second
      # library of the same file name gets a number.
      path=$(realpath "$n") label=$(basename "$path" .so) k=1
      while [ -n "${lib_of[$label]+set}" ]; do k=$((k + 1)) label=$(basename "$path" .so)-$k; done
      echo "suites: $label is $path" >&2
      lib_of[$label]=$path n=$label ;;
    *) die "unknown library '$n' (strata, kingsley, lea, secure or a path)" ;;
  esac
  allocators+=("$n")
done

mkdir -p "$out"
if ((${#need_build[@]})); then
  # shellcheck source=build_tree.sh
  source scripts/build_tree.sh
  [ -f build/build.ninja ] || configure_build >"$out/cmake.log" ||
    die "configuring build/ failed, see $out/cmake.log"
  nice cmake --build build -j1 --target strata-probe "${need_build[@]}" >"$out/libs.log" 2>&1 ||
    die "building the libraries failed, see $out/libs.log"
fi
probe=$root/build/bin/strata-probe

rows=() failed=0
row() { rows+=("$(printf '%-15s %-17s %-62s %-9s %6ss' "$@")"); }

# Runs "$@" with allocator $1's library preloaded (nothing for glibc).
with_alloc() {
  local lib=${lib_of[$1]}; shift
  if [ -n "$lib" ]; then LD_PRELOAD=$lib "$@"; else "$@"; fi
}

# Checks that the library really serves malloc: in the probe, and in a Python process started
# by a Python process (as regrtest starts its workers), by where malloc_usable_size resolves.
check_preload() {
  local a=$1 lib=${lib_of[$1]} got
  [ -n "$lib" ] || return 0
  got=$(LD_PRELOAD=$lib "$probe" | sed -n 's/^malloc=//p')
  [ "$got" = "$lib" ] || { echo "suites: $a: malloc resolves to '$got' in the probe, not $lib" >&2; return 1; }
  got=$(LD_PRELOAD=$lib PYTHONMALLOC=malloc "$python" -c '
import subprocess, sys
child = r"""
import ctypes
class Info(ctypes.Structure):
    _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p),
                ("sname", ctypes.c_char_p), ("saddr", ctypes.c_void_p)]
info = Info()
f = ctypes.cast(ctypes.CDLL(None).malloc_usable_size, ctypes.c_void_p)
ctypes.CDLL(None).dladdr(f, ctypes.byref(info))
print(info.fname.decode())
"""
print(subprocess.run([sys.executable, "-c", child], capture_output=True, text=True).stdout.strip())')
  [ "$got" = "$lib" ] || { echo "suites: $a: malloc_usable_size resolves to '$got' in Python, not $lib" >&2; return 1; }
}

suite_python() {
  dpkg-query -W -f='${Status}' libpython3.11-testsuite 2>/dev/null | grep "ok installed" >/dev/null || {
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    echo "suites: installing libpython3.11-testsuite" >&2
    $sudo apt-get update && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y libpython3.11-testsuite ||
      die "could not install libpython3.11-testsuite"
  }
  local mode a base log xml t0 secs ran verdict
  for mode in malloc pymalloc; do
    for a in "${allocators[@]}"; do
      log=$out/python-$mode-$a.log xml=$out/python-$mode-$a.xml
      rm -f "$xml"
      echo "suites: python ($mode) under $a ..." >&2
      if ! check_preload "$a"; then row "python/$mode" "$a" "not run: library not in use" FAILED 0; failed=1; continue; fi
      t0=$(date +%s)
      (cd "$out" && if [ $mode = malloc ]; then export PYTHONMALLOC=malloc; else unset PYTHONMALLOC; fi
        with_alloc "$a" nice "$python" -m test -j1 --timeout 900 --junit-xml "$xml" "${modules[@]}") \
        >"$log" 2>&1
      secs=$(($(date +%s) - t0))
      if [ "$a" = glibc ]; then
        ran=$("$python" scripts/suites_regrtest.py "$log" "$xml") && verdict=baseline || verdict=FAILED
      else
        base=$out/python-$mode-glibc
        ran=$("$python" scripts/suites_regrtest.py "$log" "$xml" "$base.log" "$base.xml" 2>"$log.diff") &&
          verdict=same || { verdict=DIFFERS; sed "s/^/  $a $mode: /" "$log.diff" | head -20 >&2; }
      fi
      [ "$verdict" = same ] || [ "$verdict" = baseline ] || failed=1
      row "python/$mode" "$a" "$ran" "$verdict" "$secs"
    done
  done
}

suite_build() {
  local tree=$out/tree a lib t0 secs ran verdict tool n
  rm -rf "$tree"
  cmake -S . -B "$tree" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$out/build-cmake.log" 2>&1 ||
    die "configuring $tree failed, see $out/build-cmake.log"
  for a in "${allocators[@]}"; do
    lib=${lib_of[$a]}
    echo "suites: build under $a ..." >&2
    if ! check_preload "$a"; then row build "$a" "not run: library not in use" FAILED 0; failed=1; continue; fi
    if [ -n "$lib" ]; then  # the compiler's own programs must load the library too
      for tool in "$(g++ -print-prog-name=cc1plus)" "$(command -v ninja)" "$(command -v ld)"; do
        LD_PRELOAD=$lib ldd "$tool" | grep -F "$lib" >/dev/null ||
          { echo "suites: $a: $tool would not load $lib" >&2; failed=1; }
      done
    fi
    ninja -C "$tree" -t clean >/dev/null
    t0=$(date +%s)
    with_alloc "$a" nice ninja -C "$tree" -j1 "${build_targets[@]}" >"$out/build-$a.log" 2>&1
    local rc=$?
    secs=$(($(date +%s) - t0))
    (cd "$tree" && find . -type f \( -name '*.o' -o -name '*.so' -o -name '*.a' -o -name '*_test' \) \
      -print0 | sort -z | xargs -0 sha256sum) >"$out/build-$a.sha256"
    n=$(wc -l <"$out/build-$a.sha256")
    ran="${#build_targets[@]} targets, $n objects, libraries and programs"
    if ((rc)); then verdict=FAILED; ran="ninja failed, see build-$a.log"
    elif [ "$a" = glibc ]; then verdict=baseline
    elif cmp -s "$out/build-$a.sha256" "$out/build-glibc.sha256"; then verdict=same
    else
      verdict=DIFFERS
      ran="$(diff "$out/build-$a.sha256" "$out/build-glibc.sha256" | grep -c '^<') of $n files differ"
      diff "$out/build-$a.sha256" "$out/build-glibc.sha256" | sed -n "s/^< [0-9a-f]*  /  $a build: differs: /p" | head -20 >&2
    fi
    [ "$verdict" = same ] || [ "$verdict" = baseline ] || failed=1
    row build "$a" "$ran" "$verdict" "$secs"
  done
}

for s in "${suites[@]}"; do "suite_$s"; done

{
  printf '%-15s %-17s %-62s %-9s %7s\n' suite allocator "what ran" "vs glibc" time
  printf '%s\n' "${rows[@]}"
} | tee "$out/table.txt"
echo "logs in $out" >&2
exit "$failed"
