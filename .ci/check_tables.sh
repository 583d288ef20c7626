#!/usr/bin/env bash
# CI: fails unless FILE (the output or report.txt of `strata compare` on the bundled
# workloads) holds, for each bundled workload, a complete table: its heading, its column
# heading, an `ok` row for each of the seven allocators, and the verdict line.
# Usage: check_tables.sh FILE
set -euo pipefail
file=$1
for workload in web-proxy editor server; do
  if ! awk -v w="$workload" '
      $0 ~ "^== " w ":" { in_table = 1; next }
      in_table && /^== / { exit }
      in_table && $1 == "allocator" && $2 == "time" { header = 1; next }
      in_table && header && $NF == "ok" { rows++ }
      in_table && /^   fastest: / { verdict = 1 }
      END { exit !(rows >= 7 && verdict) }' "$file"; then
    echo "FAILED: no complete table for the bundled workload $workload in $file"
    exit 1
  fi
done
