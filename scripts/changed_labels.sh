#!/usr/bin/env bash
# Takes paths of the checkout as arguments, or else one a line on standard input (as `git diff
# --name-only` prints them), and prints
# the CTest labels of the tests that a change to them should run, sorted, one a line; "*"
# stands for every test. Used by `scripts/test.sh --quick`:
#   layers/, tests/layers/, examples/     layers
#   toolkit/C/, tests/toolkit/C/          the component C and every component listed after
#                                         it in toolkit/CMakeLists.txt (those that may use
#                                         it), with the end-to-end folders
#                                         (drag_check, report_browser) and the include check
#                                         (layering)
#   tests/toolkit/F/ of another folder F  F
#   bench/                                bench
#   docs, *.md, fuzz/, .ci/               nothing (scripts/fuzz.sh runs a fuzz target)
#   anything else (build files, scripts/, tests/common/, data/)   *
set -euo pipefail
cd "$(dirname "$0")/.."
components=$(sed -n '/^set(strata_toolkit_components/,/)/p' toolkit/CMakeLists.txt |
  tr -d '()' | sed 's/set strata_toolkit_components//' | tr -s ' \n' '\n' | sed '/^$/d')
paths() { if (($#)); then printf '%s\n' "$@"; else cat; fi; }
paths "$@" | while read -r path; do
  case $path in
    layers/* | tests/layers/* | examples/*) echo layers ;;
    toolkit/*/* | tests/toolkit/*/*)
      c=${path#tests/}
      c=${c#toolkit/}
      c=${c%%/*}
      if grep -qx "$c" <<<"$components"; then
        sed -n "/^$c\$/,\$p" <<<"$components"
        printf '%s\n' drag_check report_browser layering
      else
        echo "$c"
      fi ;;
    bench/*) echo bench ;;
    docs/* | *.md | fuzz/* | .ci/*) ;;
    *) echo '*' ;;
  esac
done | sort -u
