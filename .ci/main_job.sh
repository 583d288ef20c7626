#!/usr/bin/env bash
# CI: the README's first command as a user types it, on the clean checkout: `bash
# scripts/run.sh` must exit 0 and print the comparison table and verdict of every bundled
# workload. Its output is kept in OUT_DIR (the first argument).
set -euo pipefail
cd "$(dirname "$0")/.."
out_dir=$1
mkdir -p "$out_dir"
start=$SECONDS
(cd "$out_dir" && bash "$OLDPWD/scripts/run.sh") >"$out_dir/main-job.txt" 2>"$out_dir/main-job.err" || {
  status=$?
  cat "$out_dir/main-job.txt" "$out_dir/main-job.err"
  echo "FAILED: the main job (bash scripts/run.sh) exited with status $status"
  exit 1
}
cat "$out_dir/main-job.txt"
for workload in web-proxy editor server; do
  # A table: its workload heading, its column heading, a row per allocator, and the verdict.
  if ! awk -v w="$workload" '
      $0 ~ "^== " w ":" { in_table = 1; next }
      in_table && /^== / { exit }
      in_table && $1 == "allocator" && $2 == "time" { header = 1; next }
      in_table && header && $NF == "ok" { rows++ }
      in_table && /^   fastest: / { verdict = 1 }
      END { exit !(rows >= 7 && verdict) }' "$out_dir/main-job.txt"; then
    echo "FAILED: the main job printed no complete table for the bundled workload $workload"
    exit 1
  fi
done
echo "main job: a table and a verdict for each of the 3 bundled workloads ($((SECONDS - start)) s)"
