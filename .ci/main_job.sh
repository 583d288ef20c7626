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
bash .ci/check_tables.sh "$out_dir/main-job.txt"
# The page beside the tables: one self-contained file holding the comparison's data.
report="$out_dir/strata-compare/report.html"
if [ ! -s "$report" ] || ! grep -q '"schema": *"strata-report-1"' "$report"; then
  echo "FAILED: the main job wrote no report.html with its data ($report)"
  exit 1
fi
echo "main job: a table and a verdict for each of the 3 bundled workloads ($((SECONDS - start)) s)"
