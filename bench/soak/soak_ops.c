/* The soak program's operations on one object: allocate it by any of the C library's
 * entry points or operator new, fill it with a pattern of its own, check the pattern before
 * every resize and free, and free it the way its allocation allows. A refused allocation
 * must be NULL with errno ENOMEM (posix_memalign: ENOMEM returned; new: std::bad_alloc),
 * and only under --pressure; anything else is counted in soak_errors. */
#define _GNU_SOURCE
#include "soak.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

atomic_long soak_errors;
atomic_long soak_enomem;
atomic_long soak_enomem_small;
atomic_long soak_calls[SOAK_KINDS + 8];
int soak_pressure;

/* C23's sized frees: glibc 2.36 neither declares nor defines them; a preloaded allocator
 * may define them, so they are looked up and called when present. */
static void (*free_sized_fn)(void*, size_t);
static void (*free_aligned_sized_fn)(void*, size_t, size_t);

#define SMALL_LIMIT ((size_t)4 << 20)

void soak_init_ops(void) {
  free_sized_fn = (void (*)(void*, size_t))dlsym(RTLD_DEFAULT, "free_sized");
  free_aligned_sized_fn =
      (void (*)(void*, size_t, size_t))dlsym(RTLD_DEFAULT, "free_aligned_sized");
}

const char* soak_call_name(int i) {
  static const char* const names[] = {
      "malloc", "calloc", "posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc",
      "new", "new[]", "new(align)", "new[](align)", "new(nothrow)", "new(align,nothrow)",
      "realloc", "reallocarray", "free", "free_sized", "free_aligned_sized", "delete",
      "malloc_usable_size", ""};
  return i < (int)(sizeof names / sizeof names[0]) ? names[i] : "";
}

void soak_fail(const char* fmt, ...) {
  long n = atomic_fetch_add(&soak_errors, 1);
  if (n >= 20) return;  /* the first few say enough */
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  int len = vsnprintf(buf, sizeof buf - 1, fmt, ap);
  va_end(ap);
  if (len < 0) return;
  if (len > (int)sizeof buf - 2) len = (int)sizeof buf - 2;
  buf[len++] = '\n';
  ssize_t ignored = write(2, buf, (size_t)len);
  (void)ignored;
}

/* The pattern: word j of an object with seed s is s ^ j * golden ratio, stored in the
 * machine's byte order; byte i is byte i % 8 of word i / 8. */
static inline uint64_t pat_word(uint64_t seed, size_t j) {
  return seed ^ ((uint64_t)j * 0x9E3779B97F4A7C15ull);
}
static inline unsigned char pat_byte(uint64_t seed, size_t i) {
  uint64_t w = pat_word(seed, i >> 3);
  unsigned char b[8];
  memcpy(b, &w, 8);
  return b[i & 7];
}

/* Writes the pattern of seed into bytes [from, to) of p. */
static void fill(unsigned char* p, size_t from, size_t to, uint64_t seed) {
  size_t i = from;
  for (; i < to && (i & 7) != 0; ++i) p[i] = pat_byte(seed, i);
  for (; i + 8 <= to; i += 8) {
    uint64_t w = pat_word(seed, i >> 3);
    memcpy(p + i, &w, 8);
  }
  for (; i < to; ++i) p[i] = pat_byte(seed, i);
}

/* The first byte of [0, n) that does not hold seed's pattern, or n. */
static size_t mismatch(const unsigned char* p, size_t n, uint64_t seed) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    if (w != pat_word(seed, i >> 3)) break;
  }
  for (; i < n; ++i)
    if (p[i] != pat_byte(seed, i)) return i;
  return n;
}

/* A request size: mostly small, some medium, a few large; under pressure now and then one
 * far beyond the limit. */
static size_t pick_size(uint64_t* rng) {
  uint64_t r = soak_below(rng, 1000);
  if (r < 700) return 1 + soak_below(rng, 256);
  if (r < 950) return 257 + soak_below(rng, 32 * 1024);
  if (r < 995) return 32 * 1024 + soak_below(rng, 224 * 1024);
  if (soak_pressure == 1 && r >= 998) return ((size_t)64 << 20) + soak_below(rng, (size_t)1 << 30);
  return 256 * 1024 + soak_below(rng, 4 * 1024 * 1024 - 256 * 1024);
}

/* A power-of-two alignment from 8 to 4096, now and then 64 KiB. */
static size_t pick_align(uint64_t* rng) {
  if (soak_below(rng, 64) == 0) return 64 * 1024;
  return (size_t)8 << soak_below(rng, 10);
}

/* Accounts for a NULL from an allocation of n bytes whose errno (or return code) was err. */
static void refused(const char* what, size_t n, int err) {
  if (!soak_pressure) {
    soak_fail("FAIL %s(%zu) returned NULL (errno %d) with no memory limit", what, n, err);
  } else if (err != ENOMEM) {
    soak_fail("FAIL %s(%zu) failed with errno %d, not ENOMEM", what, n, err);
  } else {
    atomic_fetch_add_explicit(&soak_enomem, 1, memory_order_relaxed);
    if (n <= SMALL_LIMIT) atomic_fetch_add_explicit(&soak_enomem_small, 1, memory_order_relaxed);
  }
}

static int is_cxx(int kind) { return kind >= SOAK_NEW; }

int soak_alloc(struct soak_obj* o, uint64_t* rng) {
  size_t n = pick_size(rng), align = 0, page = (size_t)sysconf(_SC_PAGESIZE);
  int kind = (int)soak_below(rng, SOAK_KINDS);
  if (soak_below(rng, 3) == 0) kind = SOAK_MALLOC;  /* the common case, more often */
  void* p = NULL;
  errno = 0;
  switch (kind) {
    case SOAK_MALLOC: p = malloc(n); break;
    case SOAK_CALLOC: {
      size_t count = 1 + soak_below(rng, 16), each = n / count ? n / count : 1;
      n = count * each;
      p = calloc(count, each);
      if (p != NULL)
        for (size_t i = 0; i < n; ++i)
          if (((unsigned char*)p)[i] != 0) {
            soak_fail("FAIL calloc(%zu, %zu): byte %zu not zero", count, each, i);
            break;
          }
      break;
    }
    case SOAK_POSIX_MEMALIGN: {
      align = pick_align(rng);
      int rc = posix_memalign(&p, align, n);
      if (rc != 0) {
        p = NULL;
        errno = rc;
      }
      break;
    }
    case SOAK_ALIGNED_ALLOC:
      align = pick_align(rng);
      n = (n + align - 1) / align * align;  /* C11 asks for a multiple of the alignment */
      p = aligned_alloc(align, n);
      break;
    case SOAK_MEMALIGN: align = pick_align(rng); p = memalign(align, n); break;
    case SOAK_VALLOC: align = page; p = valloc(n); break;
    case SOAK_PVALLOC: align = page; p = pvalloc(n); break;
    default:
      if (kind >= SOAK_NEW_ALIGNED && kind != SOAK_NEW_NOTHROW) align = pick_align(rng);
      p = soak_new(n, align, kind);
      errno = p == NULL ? ENOMEM : 0;  /* bad_alloc, or NULL from a nothrow form */
      break;
  }
  if (p == NULL) {
    refused(soak_call_name(kind), n, errno);
    return 0;
  }
  atomic_fetch_add_explicit(&soak_calls[kind], 1, memory_order_relaxed);
  *o = (struct soak_obj){(unsigned char*)p, n, align, soak_next(rng), kind};
  if (align != 0 && (uintptr_t)p % align != 0)
    soak_fail("FAIL %s(align %zu, %zu) = %p: not aligned", soak_call_name(kind), align, n, p);
  if (kind == SOAK_PVALLOC) {
    size_t usable = malloc_usable_size(p), want = n ? (n + page - 1) / page * page : page;
    if (usable < want)
      soak_fail("FAIL pvalloc(%zu): usable size %zu below the page-rounded %zu", n, usable, want);
  }
  fill(o->p, 0, n, o->seed);
  return 1;
}

int soak_check(const struct soak_obj* o, const char* where) {
  size_t at = mismatch(o->p, o->n, o->seed);
  if (at == o->n) return 1;
  soak_fail("FAIL %s: object %p (%zu bytes, %s) changed at byte %zu", where, (void*)o->p, o->n,
            soak_call_name(o->kind), at);
  return 0;
}

void soak_release(struct soak_obj* o, uint64_t* rng, const char* where) {
  soak_check(o, where);
  int sized = (int)soak_below(rng, 2);
  if (is_cxx(o->kind)) {
    soak_delete(o->p, o->n, o->align, o->kind, sized);
    atomic_fetch_add_explicit(&soak_calls[SOAK_CALL_DELETE], 1, memory_order_relaxed);
  } else if (sized && free_sized_fn && (o->kind == SOAK_MALLOC || o->kind == SOAK_CALLOC)) {
    free_sized_fn(o->p, o->n);
    atomic_fetch_add_explicit(&soak_calls[SOAK_CALL_FREE_SIZED], 1, memory_order_relaxed);
  } else if (sized && free_aligned_sized_fn && o->kind == SOAK_ALIGNED_ALLOC) {
    free_aligned_sized_fn(o->p, o->align, o->n);
    atomic_fetch_add_explicit(&soak_calls[SOAK_CALL_FREE_ALIGNED_SIZED], 1, memory_order_relaxed);
  } else {
    free(o->p);
    atomic_fetch_add_explicit(&soak_calls[SOAK_CALL_FREE], 1, memory_order_relaxed);
  }
  o->p = NULL;
}

void soak_resize(struct soak_obj* o, uint64_t* rng) {
  if (is_cxx(o->kind) || !soak_check(o, "before realloc")) return;
  size_t n = pick_size(rng);
  int array = (int)soak_below(rng, 2);
  void* p;
  errno = 0;
  if (array) {
    size_t count = 1 + soak_below(rng, 8), each = n / count ? n / count : 1;
    n = count * each;
    p = reallocarray(o->p, count, each);
  } else {
    p = realloc(o->p, n);
  }
  if (p == NULL) {
    refused(array ? "reallocarray" : "realloc", n, errno);
    soak_check(o, "after a refused realloc");  /* the old block must be untouched */
    return;
  }
  atomic_fetch_add_explicit(&soak_calls[array ? SOAK_CALL_REALLOCARRAY : SOAK_CALL_REALLOC], 1,
                            memory_order_relaxed);
  struct soak_obj moved = {(unsigned char*)p, n < o->n ? n : o->n, 0, o->seed, SOAK_MALLOC};
  soak_check(&moved, "after realloc (the kept prefix)");
  if (n > o->n) fill(moved.p, o->n, n, o->seed);
  moved.n = n;
  *o = moved;
}

void soak_usable(const struct soak_obj* o) {
  if (is_cxx(o->kind)) return;
  size_t usable = malloc_usable_size(o->p);
  atomic_fetch_add_explicit(&soak_calls[SOAK_CALL_USABLE_SIZE], 1, memory_order_relaxed);
  if (usable < o->n)
    soak_fail("FAIL malloc_usable_size(%p) = %zu, below the %zu bytes asked for", (void*)o->p,
              usable, o->n);
}
