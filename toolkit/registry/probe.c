/* strata-probe: started with an allocator's library in LD_PRELOAD and its settings in the
 * environment, it says where malloc and free come from and which version the allocator
 * reports, so that `strata` can tell a library that was not preloaded, or that does not take
 * over malloc, from one that works, before any replay runs (toolkit/registry/allocator_spec.cpp).
 *
 * Output on stdout, one `key=value` line each: malloc=FILE, free=FILE (the object each
 * resolves to), version=TEXT when the allocator answers one of the version calls below,
 * libc=TEXT the C library's version, and nomem=SIZE for each of its first requests (16 B to
 * 8 MiB) that malloc could not serve.
 * It allocates a little first so the allocator initialises and prints any complaint about
 * its settings on stderr, which the caller keeps. Written in C: no C++ runtime of its own. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints "key=FILE" for the object that defines `symbol` as the program sees it. */
static void where(const char* key, const char* symbol) {
  void* f = dlsym(RTLD_DEFAULT, symbol);
  Dl_info info;
  if (f != NULL && dladdr(f, &info) != 0 && info.dli_fname != NULL)
    printf("%s=%s\n", key, info.dli_fname);
  else
    printf("%s=\n", key);
}

/* The allocator's version, by the call each one offers; nothing when none does. */
static void version(void) {
  typedef int (*mallctl_fn)(const char*, void*, size_t*, void*, size_t);
  typedef int (*mi_version_fn)(void);
  typedef const char* (*tc_version_fn)(int*, int*, const char**);
  mallctl_fn mallctl = (mallctl_fn)dlsym(RTLD_DEFAULT, "mallctl");
  mi_version_fn mi_version = (mi_version_fn)dlsym(RTLD_DEFAULT, "mi_version");
  tc_version_fn tc_version = (tc_version_fn)dlsym(RTLD_DEFAULT, "tc_version");
  if (mallctl != NULL) {
    const char* v = NULL;
    size_t len = sizeof v;
    if (mallctl("version", &v, &len, NULL, 0) == 0 && v != NULL) {
      printf("version=jemalloc %s\n", v);
      return;
    }
  }
  if (mi_version != NULL) {
    const int v = mi_version();
    printf("version=mimalloc %d.%d.%d\n", v / 100, (v / 10) % 10, v % 10);
    return;
  }
  if (tc_version != NULL) {
    int major = 0, minor = 0;
    const char* patch = "";
    const char* v = tc_version(&major, &minor, &patch);
    printf("version=%s\n", v != NULL ? v : "gperftools");
    return;
  }
}

int main(void) {
  /* A few sizes, small to large, so that every allocator has initialised and read its
   * settings (some read an option only on first use). */
  static const size_t sizes[] = {16, 256, 4096, 65536, 1 << 20, 8 << 20};
  void* blocks[sizeof sizes / sizeof sizes[0]];
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    blocks[i] = malloc(sizes[i]);
    if (blocks[i] != NULL) memset(blocks[i], 1, sizes[i]);
  }
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
    if (blocks[i] == NULL) printf("nomem=%zu\n", sizes[i]);
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) free(blocks[i]);
  where("malloc", "malloc");
  where("free", "free");
  version();
  printf("libc=glibc %s\n", gnu_get_libc_version());
  return fflush(stdout) == 0 ? 0 : 1;
}
