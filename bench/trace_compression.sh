#!/usr/bin/env bash
# Compressed traces (trace format version 3): bytes per event of each bundled workload and
# of a recorded program, plain and compressed, and `strata stats` speed on both (median of
# three runs). Usage: bench/trace_compression.sh STRATA [SIZE] [WORKDIR]
#   STRATA   the strata command (build/bin/strata)
#   SIZE     million events per workload (default 10); stats is timed on steady at 10 x SIZE
#   WORKDIR  where the traces go (default: a temporary directory, removed after)
# The recorded program is Debian's python3 with PYTHONMALLOC=malloc (every object through
# malloc), running a small JSON workload; its recording is timed plain and compressed too.
set -euo pipefail
strata=${1:?usage: $0 STRATA [SIZE] [WORKDIR]}
size=${2:-10}
work=${3:-$(mktemp -d)}
[[ $# -ge 3 ]] || trap 'rm -rf "$work"' EXIT
cd "$work"

# "WALL s (CPU s)": the medians of three runs of a command, wall clock and user + system
# time (the CPU time says more on a shared machine; the wall time shows a second core used).
median3() {
  local wall=() cpu=()
  for _ in 1 2 3; do
    /usr/bin/time -f '%e %U %S' -o time.txt "$@" > /dev/null 2>&1
    read -r w u s < <(tail -1 time.txt)
    wall+=("$w")
    cpu+=("$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')")
  done
  echo "$(printf '%s\n' "${wall[@]}" | sort -n | sed -n 2p) s ($(printf '%s\n' "${cpu[@]}" | sort -n | sed -n 2p) s CPU)"
}
# Events and bytes of a trace.
events() { "$strata" stats --json "$1" | sed -n 's/^ *"events": \([0-9]*\),.*/\1/p'; }
bytesPerEvent() { awk -v b="$(stat -c %s "$1")" -v e="$(events "$1")" 'BEGIN { printf "%.2f", b / e }'; }

echo "workload     events     plain B/ev  compressed B/ev"
for w in web-proxy editor server steady; do
  "$strata" generate "$w" --size "$size" --no-compress -o "$w.plain.trace" 2> /dev/null
  "$strata" generate "$w" --size "$size" -o "$w.z.trace" 2> /dev/null
  printf '%-12s %-10s %-11s %s\n' "$w" "$(events "$w.z.trace")" \
    "$(bytesPerEvent "$w.plain.trace")" "$(bytesPerEvent "$w.z.trace")"
done

cat > work.py <<'PY'
import json, random
random.seed(1)
data = []
for i in range(300000):
    data.append({"id": i, "name": "item%d" % i, "tags": [str(random.random()) for _ in range(3)]})
    if len(data) > 50000:
        data = data[25000:]
back = json.loads(json.dumps(data[:20000]))
print(len(sorted(set(w for d in back for w in d["tags"]))))
PY
export PYTHONMALLOC=malloc
echo
echo "python3 (PYTHONMALLOC=malloc): unrecorded $(median3 /usr/bin/python3 work.py) s," \
     "recorded plain $(median3 "$strata" record --no-compress -o py.plain.trace -- /usr/bin/python3 work.py) s," \
     "compressed $(median3 "$strata" record -o py.z.trace -- /usr/bin/python3 work.py) s"
echo "python3 trace: $(events py.z.trace) events, plain $(bytesPerEvent py.plain.trace) B/ev," \
     "compressed $(bytesPerEvent py.z.trace) B/ev"

big=$((size * 10))
"$strata" generate steady --size "$big" --no-compress -o big.plain.trace 2> /dev/null
"$strata" generate steady --size "$big" -o big.z.trace 2> /dev/null
echo
echo "strata stats, median of 3 (s): steady ${big} M plain $(median3 "$strata" stats big.plain.trace)," \
     "compressed $(median3 "$strata" stats big.z.trace); python3 plain" \
     "$(median3 "$strata" stats py.plain.trace), compressed $(median3 "$strata" stats py.z.trace)"
