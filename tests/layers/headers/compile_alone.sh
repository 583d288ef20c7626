#!/usr/bin/env bash
# Every public header compiles on its own, first and alone in a file: each .hpp as C++20, each
# C header (.h) as C11 and as C++20, with the project's warning flags, so none leans on an
# include that happens to come before it in the files that use it.
#
# usage: compile_alone.sh CXX CC "FLAGS" INCLUDE_DIR...
#   FLAGS: the warning flags, one word each (e.g. "-Wall -Wextra -Werror")
# Exits 1 naming each header that does not compile, with the compiler's first lines.
set -uo pipefail
cxx=$1 cc=$2
read -r -a flags <<<"$3"
shift 3
includes=()
for dir in "$@"; do includes+=("-I$dir"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One check: LANG (c or c++), STD, the header as it is included ("strata/reap.h").
check() {
  local lang=$1 std=$2 name=$3 compiler=$cxx
  [[ $lang == c ]] && compiler=$cc
  local log
  log="$work/$(echo "$lang-$name" | tr '/' '_').log"
  if ! printf '#include "%s"\n' "$name" |
      "$compiler" -x "$lang" "-std=$std" -fsyntax-only "${flags[@]}" "${includes[@]}" - \
      >"$log" 2>&1; then
    echo "FAILED: $name does not compile alone as $lang ($std):"
    head -n 8 "$log"
    return 1
  fi
}

jobs=()
for dir in "$@"; do
  while IFS= read -r path; do
    name=${path#"$dir"/}
    case $name in
      *.hpp) jobs+=("c++ c++20 $name") ;;
      *.h) jobs+=("c c11 $name" "c++ c++20 $name") ;;
    esac
  done < <(find "$dir" -name '*.hpp' -o -name '*.h' | sort)
done
((${#jobs[@]} > 20)) || { echo "FAILED: only ${#jobs[@]} headers found under $*"; exit 1; }

export -f check
export cxx cc work
failed=0
printf '%s\n' "${jobs[@]}" |
  xargs -P "$(nproc)" -I{} bash -c "$(declare -p flags includes); check {}" || failed=1
if ((failed)); then exit 1; fi
echo "${#jobs[@]} compiles of public headers, each alone: all passed"
