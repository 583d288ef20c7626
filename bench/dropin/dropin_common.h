/* Shared by the drop-in suite's workload programs (bench/dropin/, run by bench/dropin_suite.py;
 * see bench/README.md): a seeded PRNG, object patterns written at allocation and checked
 * before free, the size arguments, and the closing report. Plain C over the process's
 * malloc, so an LD_PRELOAD changes the allocator and nothing else. */
#ifndef STRATA_DROPIN_COMMON_H
#define STRATA_DROPIN_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/splitmix.h"

/* A log-uniform size in [lo, hi]: as many small as large blocks per doubling. */
static inline size_t di_log_uniform(uint64_t* state, size_t lo, size_t hi) {
  const double u = (double)(splitmix_next(state) >> 11) / 9007199254740992.0;
  const double v = exp(log((double)lo) + u * (log((double)hi) - log((double)lo)));
  return v < (double)lo ? lo : v > (double)hi ? hi : (size_t)v;
}

/* A 64-bit hash of one value (the splitmix finaliser): the per-object checksum term. */
static inline uint64_t di_hash(uint64_t v) {
  uint64_t s = v;
  return splitmix_next(&s);
}

/* Dies with a message: a failed check is the allocator's fault, and the driver must see it. */
static inline void di_fail(const char* what, uint64_t id) {
  fprintf(stderr, "dropin: %s (object %llu)\n", what, (unsigned long long)id);
  exit(3);
}

/* Out of memory is a result the driver must see, not a crash. */
static inline void* di_check(void* p, const char* what) {
  if (p == NULL) {
    fprintf(stderr, "dropin: out of memory (%s)\n", what);
    exit(1);
  }
  return p;
}

/* Writes object `id`'s pattern into p[0..n): its id in the first 8 bytes (n >= 16) and a
 * byte derived from it everywhere else, so any overlap or corruption shows when checked. */
static inline void di_fill(void* p, size_t n, uint64_t id) {
  memset((char*)p + 8, (int)(id * 131 + 7) & 0xff, n - 8);
  memcpy(p, &id, 8);
}

/* Checks what di_fill wrote (the id, the first, middle and last pattern bytes) and returns
 * the id; dies if anything changed. */
static inline uint64_t di_verify(const void* p, size_t n, uint64_t id) {
  const unsigned char* c = (const unsigned char*)p;
  const unsigned char b = (unsigned char)((id * 131 + 7) & 0xff);
  uint64_t got;
  memcpy(&got, p, 8);
  if (got != id || c[8] != b || c[n / 2 > 8 ? n / 2 : 8] != b || c[n - 1] != b)
    di_fail("object contents changed before free", id);
  return got;
}

/* Argument `index` as a positive integer, else `fallback`; bad input is a usage error. */
static inline long di_arg(int argc, char** argv, int index, long fallback, const char* usage) {
  if (argc <= index) return fallback;
  char* end = NULL;
  const long v = strtol(argv[index], &end, 10);
  if (end == argv[index] || *end != '\0' || v <= 0) {
    fprintf(stderr, "usage: %s %s  (positive integers)\n", argv[0], usage);
    exit(2);
  }
  return v;
}

/* The last line of every program: the file that defines malloc in this process (dladdr),
 * so the driver can tell whether the LD_PRELOAD took over. */
static inline void di_report_malloc(void) {
  Dl_info info;
  void* sym = dlsym(RTLD_DEFAULT, "malloc");
  const char* from = sym != NULL && dladdr(sym, &info) != 0 && info.dli_fname != NULL
                         ? info.dli_fname
                         : "?";
  printf("malloc %s\n", from);
}

#endif
