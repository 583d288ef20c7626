/* The soak program's shared pieces (bench/soak/): an object and the ways it was allocated,
 * the counters every thread adds to, the random numbers, and the operations on one object
 * (soak_ops.c) and the C++ allocation functions (soak_new.cpp). */
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
#endif

/* C++ (soak_new.cpp): operator new in form kind (SOAK_NEW...), NULL when it threw
 * std::bad_alloc or the nothrow form returned NULL; the matching delete, sized or not. */
void* soak_new(size_t n, size_t align, int kind) SOAK_NOEXCEPT;
void soak_delete(void* p, size_t n, size_t align, int kind, int sized) SOAK_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif
