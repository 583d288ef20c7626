/* Shared by the fidelity programs (bench/fidelity/README.md): a deterministic PRNG, a
 * checksum, and the size argument. Plain C so that every program links nothing but libc
 * and the allocator under test is the only thing an LD_PRELOAD changes. */
#ifndef STRATA_FIDELITY_COMMON_H
#define STRATA_FIDELITY_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/splitmix.h"

/* FNV-1a over bytes, folded into a running checksum. */
static inline uint64_t fid_mix(uint64_t h, const void* data, size_t n) {
  const unsigned char* p = (const unsigned char*)data;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static inline uint64_t fid_mix_u64(uint64_t h, uint64_t v) { return fid_mix(h, &v, sizeof v); }

/* The size argument: argv[1] as a positive integer, else `fallback`. Bad input is an error
 * with a message and exit status 2. */
static inline long fid_size_arg(int argc, char** argv, long fallback, const char* what) {
  if (argc < 2) return fallback;
  char* end = NULL;
  const long v = strtol(argv[1], &end, 10);
  if (end == argv[1] || *end != '\0' || v <= 0) {
    fprintf(stderr, "usage: %s [%s]  (a positive integer; default %ld)\n", argv[0], what,
            fallback);
    exit(2);
  }
  return v;
}

/* Out of memory is a result the harness must see, not a crash. */
static inline void* fid_check(void* p, const char* what) {
  if (p == NULL) {
    fprintf(stderr, "fidelity: out of memory (%s)\n", what);
    exit(1);
  }
  return p;
}

#endif
