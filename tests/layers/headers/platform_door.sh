#!/usr/bin/env bash
# The layers reach the kernel and the process's environment only through strata/platform/:
# no header under INCLUDE_DIR/strata outside platform/ calls a system call wrapper (memory,
# residency, randomness, the auxiliary vector, clocks, file descriptors, scheduling, the
# process id), reads the environment, or includes the system headers those come from. So a
# port changes platform/ alone, and a new side door fails here instead of being found later.
#
# usage: platform_door.sh INCLUDE_DIR
# Exits 1 naming file:line and the line of each call or include that belongs in platform/.
# Comments are not read (the layers name the calls they make through platform/ in prose).
set -uo pipefail
root=$1/strata
[[ -d $root/platform ]] || { echo "FAILED: no $root/platform"; exit 1; }

# A call of one of these, plain, through :: or through std:: (not a member: x.write, Super::map).
calls='mmap|munmap|mremap|madvise|mprotect|mincore|sbrk|brk|getrandom|getentropy|getauxval'
calls+='|clock_gettime|gettimeofday|time|sysconf|getpagesize|syscall|getpid|gettid'
calls+='|sched_yield|getenv|secure_getenv'
call="(^|[^A-Za-z0-9_:.>])(std::|::)?($calls)[[:space:]]*\\("
# Descriptor calls, written with :: so that a layer's own write() or close() is not one.
fd_call="(^|[^A-Za-z0-9_:])::(write|writev|read|open|openat|close)[[:space:]]*\\("
# The headers those calls come from.
include='^[[:space:]]*#[[:space:]]*include[[:space:]]*<(sys/[a-z_]+|unistd|time|sched|fcntl)\.h>'

found=$(find "$root" -path "$root/platform" -prune -o \( -name '*.hpp' -o -name '*.h' \) -print |
  sort | xargs awk -v call="$call" -v fd_call="$fd_call" -v include="$include" '
    { code = $0; sub(/\/\/.*/, "", code) }
    code ~ call || code ~ fd_call || code ~ include { print FILENAME ":" FNR ": " $0 }')
if [[ -n $found ]]; then
  echo "FAILED: these go through strata/platform/ (add a function there and call it):"
  echo "${found//"$1/"/}"
  exit 1
fi
echo "every kernel and environment call of the layers is in strata/platform/"
