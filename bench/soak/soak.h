/* The soak program's shared pieces (bench/soak/): an object and the ways it was allocated,
 * the counters every thread adds to, the random numbers, and the operations on one object
 * (soak_ops.c), the C++ allocation functions (soak_new.cpp), the command line
 * (soak_options.c) and the --pressure mode's limit and recovery (soak_pressure.c). */
#ifndef STRATA_SOAK_H
#define STRATA_SOAK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define SOAK_NOEXCEPT noexcept
extern "C" {
#else
#include <stdatomic.h>
#define SOAK_NOEXCEPT
#endif

/* How an object was allocated: it decides how it may be freed, resized and checked. */
enum soak_kind {
  SOAK_MALLOC,         /* malloc, or the result of realloc / reallocarray */
  SOAK_CALLOC,
  SOAK_POSIX_MEMALIGN,
  SOAK_ALIGNED_ALLOC,
  SOAK_MEMALIGN,
  SOAK_VALLOC,
  SOAK_PVALLOC,
  SOAK_NEW,            /* the forms of operator new, as soak_new() numbers them */
  SOAK_NEW_ARRAY,
  SOAK_NEW_ALIGNED,
  SOAK_NEW_ARRAY_ALIGNED,
  SOAK_NEW_NOTHROW,
  SOAK_NEW_ALIGNED_NOTHROW,
  SOAK_KINDS
};

/* One live object: n bytes at p holding the pattern of seed. p == NULL: no object. */
struct soak_obj {
  unsigned char* p;
  size_t n;
  size_t align;
  uint64_t seed;
  int kind;
};

#ifndef __cplusplus
/* Counters shared by every thread (and, in a child after fork, the child's own copies). */
extern atomic_long soak_errors;        /* checks that failed: the run fails */
extern atomic_long soak_enomem;        /* allocations refused with ENOMEM / bad_alloc */
extern atomic_long soak_enomem_small;  /* ... of those, requests of at most 4 MiB */
extern atomic_long soak_calls[SOAK_KINDS + 8]; /* successful calls per entry point */
/* 0: a refusal is a failure; 1 (--pressure): refusals are expected and now and then a
 * request far beyond any limit is made; 2: refusals are allowed, no such requests. */
extern int soak_pressure;

/* Indices into soak_calls after the allocation kinds. */
enum { SOAK_CALL_REALLOC = SOAK_KINDS, SOAK_CALL_REALLOCARRAY, SOAK_CALL_FREE,
       SOAK_CALL_FREE_SIZED, SOAK_CALL_FREE_ALIGNED_SIZED, SOAK_CALL_DELETE,
       SOAK_CALL_USABLE_SIZE };

/* xorshift64*: a few instructions per number, enough for sizes and actions. */
static inline uint64_t soak_next(uint64_t* s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1Dull;
}
static inline uint64_t soak_below(uint64_t* s, uint64_t n) { return soak_next(s) % n; }

/* Reports a failed check (counted in soak_errors) with write(2): safe in a child of a
 * threaded parent, where stdio's lock may be held by a thread that no longer exists. */
void soak_fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/* Looks up the entry points a C library may lack (free_sized, free_aligned_sized). */
void soak_init_ops(void);
/* The names of the entry points whose counts are in soak_calls ("" for unused indices). */
const char* soak_call_name(int i);
/* Allocates *o by a random entry point, fills it with its pattern; 1 if it got memory, 0 if
 * the allocator refused (legitimately, with ENOMEM, or not: then soak_errors counts it). */
int soak_alloc(struct soak_obj* o, uint64_t* rng);
/* 1 if *o still holds its pattern (and alignment); otherwise reports it (where) and 0. */
int soak_check(const struct soak_obj* o, const char* where);
/* Checks and frees *o by a way that matches how it was allocated; leaves it empty. */
void soak_release(struct soak_obj* o, uint64_t* rng, const char* where);
/* Checks *o and resizes it with realloc or reallocarray (C kinds only; others are left). */
void soak_resize(struct soak_obj* o, uint64_t* rng);
/* malloc_usable_size(o->p) must be at least o->n (C kinds only). */
void soak_usable(const struct soak_obj* o);

/* The most worker threads --threads may ask for. */
#define SOAK_MAX_THREADS 64

/* The command line (soak_options.c): soak_parse_options fills o, with the defaults where
 * an option is not given, or prints the usage message and exits (0 for --help, 2). */
struct soak_options {
  long seconds, churn_ops, fork_ms, limit_mib;
  int threads, pressure, malloc_stats;
  const char* rss_path; /* --rss FILE, NULL without it */
};
void soak_parse_options(int argc, char** argv, struct soak_options* o);

/* --pressure (soak_pressure.c). soak_run_under_limit sets RLIMIT_AS to limit_mib MiB and
 * runs the program again (argv) under it; it returns only on failure, 2 after saying why.
 * soak_limit_mib is the limit the process runs under now. soak_check_recovery, after the
 * mix, refills the heap under the limit and with it lifted: 1 if the run passes (the heap
 * works again with the limit lifted, and enomem_small > 0 requests of at most 4 MiB were
 * refused), with *recovered "yes", "after-lifting-limit" or "no". */
int soak_run_under_limit(char** argv, long limit_mib);
long soak_limit_mib(void);
int soak_check_recovery(long limit_mib, long enomem_small, const char** recovered);
#endif

/* C++ (soak_new.cpp): operator new in form kind (SOAK_NEW...), NULL when it threw
 * std::bad_alloc or the nothrow form returned NULL; the matching delete, sized or not. */
void* soak_new(size_t n, size_t align, int kind) SOAK_NOEXCEPT;
void soak_delete(void* p, size_t n, size_t align, int kind, int sized) SOAK_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif
