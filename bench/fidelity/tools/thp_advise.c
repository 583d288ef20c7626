/* thp_advise.so: an investigation aid (docs/toolkit/fidelity.md), not a benchmark program. Preloaded
 * before an allocator, it asks for transparent huge pages (madvise MADV_HUGEPAGE) on every
 * anonymous mapping made through mmap(), so that on a machine whose THP mode is "madvise"
 * a program behaves roughly as under THP "always". glibc malloc maps memory through an
 * internal mmap this does not see; use GLIBC_TUNABLES=glibc.malloc.hugetlb=1 for it.
 *
 *   gcc -O2 -shared -fPIC -o thp_advise.so thp_advise.c
 *   LD_PRELOAD="$PWD/thp_advise.so /usr/lib/x86_64-linux-gnu/libmimalloc.so.2" PROGRAM
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The system call itself, not dlsym(RTLD_NEXT): an allocator may map memory before the
 * dynamic linker could answer, and dlsym may allocate. */
void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  void* p = (void*)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
  if (p != MAP_FAILED && (flags & MAP_ANONYMOUS)) madvise(p, len, MADV_HUGEPAGE);
  return p;
}

void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off_t off)
    __attribute__((alias("mmap")));
