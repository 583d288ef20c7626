// Conformance of a malloc implementation with the C and glibc allocation API: run once on
// glibc (the reference) and once per Strata library, by LD_PRELOAD and by linking.
//
//   malloc_conformance [--expect LIBNAME]
//
// With --expect, malloc must resolve into a library whose path contains LIBNAME, and the
// entry points glibc 2.36 lacks (free_sized, free_aligned_sized) must exist. Every check
// prints a line on failure; the program ends with "conformance ok" and status 0 when all
// passed. The C++ operators are checked by conformance_cxx.cpp (run_cxx_checks).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int run_cxx_checks(void);

static int failures = 0;
static int expect_strata = 0;  // --expect given: Strata's stricter promises are checked too

#define CHECK(cond)                                                       \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);     \
      ++failures;                                                         \
    }                                                                     \
  } while (0)

// Sizes go through a volatile so the compiler cannot fold a call with a constant size.
static volatile size_t sink_size;
static size_t opaque(size_t n) {
  sink_size = n;
  return sink_size;
}

static int aligned(const void* p, size_t a) { return ((uintptr_t)p & (a - 1)) == 0; }

static void fill(unsigned char* p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) p[i] = (unsigned char)(seed + i * 7);
}
static int filled(const unsigned char* p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != (unsigned char)(seed + i * 7)) return 0;
  return 1;
}

static const size_t kSizes[] = {0,    1,     7,     8,      15,     16,      17,      24,
                                31,   32,    48,    63,     64,     100,     127,     128,
                                129,  255,   256,   511,    512,    1000,    1024,    4095,
                                4096, 4097,  10000, 65536,  131071, 131072,  200000,  1 << 20,
                                (4 << 20) + 3};
#define NSIZES (sizeof kSizes / sizeof kSizes[0])

static void check_malloc(void) {
  for (size_t i = 0; i < NSIZES; ++i) {
    const size_t n = opaque(kSizes[i]);
    unsigned char* p = malloc(n);
    CHECK(p != NULL);
    if (p == NULL) continue;
    CHECK(aligned(p, 16));
    const size_t usable = malloc_usable_size(p);
    CHECK(usable >= n);
    fill(p, usable, 3);  // the whole usable size is writable
    CHECK(filled(p, usable, 3));
    free(p);
  }
  // malloc(0): unique, non-null, freeable pointers.
  void* zero[64];
  for (int i = 0; i < 64; ++i) {
    zero[i] = malloc(opaque(0));
    CHECK(zero[i] != NULL);
    for (int j = 0; j < i; ++j) CHECK(zero[i] != zero[j]);
  }
  for (int i = 0; i < 64; ++i) free(zero[i]);
  // Failures: NULL and ENOMEM.
  errno = 0;
  CHECK(malloc(opaque(SIZE_MAX)) == NULL && errno == ENOMEM);
  errno = 0;
  CHECK(malloc(opaque((size_t)PTRDIFF_MAX + 1)) == NULL && errno == ENOMEM);
  errno = 0;
  CHECK(malloc(opaque(SIZE_MAX - 4096)) == NULL && errno == ENOMEM);
  errno = 0;
  CHECK(malloc(opaque((size_t)1 << 52)) == NULL && errno == ENOMEM);  // 4 PiB
  free(NULL);
  CHECK(malloc_usable_size(NULL) == 0);
}

static void check_calloc(void) {
  for (size_t i = 0; i < NSIZES; ++i) {
    const size_t n = opaque(kSizes[i]);
    // Dirty memory of that size first, so a recycled block must really be cleared.
    unsigned char* d = malloc(n);
    if (d != NULL) memset(d, 0xAB, n);
    free(d);
    unsigned char* p = calloc(n, 1);
    CHECK(p != NULL && aligned(p, 16));
    if (p == NULL) continue;
    int zero = 1;
    for (size_t k = 0; k < n; ++k) zero &= p[k] == 0;
    CHECK(zero);
    free(p);
  }
  unsigned* q = calloc(opaque(1000), sizeof(unsigned));
  CHECK(q != NULL && q[0] == 0 && q[999] == 0);
  free(q);
  void* z = calloc(opaque(0), opaque(0));
  CHECK(z != NULL);
  free(z);
  errno = 0;
  CHECK(calloc(opaque(SIZE_MAX / 2), opaque(3)) == NULL && errno == ENOMEM);
  errno = 0;
  CHECK(calloc(opaque((size_t)1 << 33), opaque((size_t)1 << 33)) == NULL && errno == ENOMEM);
  errno = 0;
  CHECK(calloc(opaque(SIZE_MAX), opaque(1)) == NULL && errno == ENOMEM);
}

static void check_realloc(void) {
  // Growth from nothing and shrinking back, the contents kept at every step.
  unsigned char* p = realloc(NULL, opaque(1));
  CHECK(p != NULL);
  fill(p, 1, 9);
  size_t have = 1;
  const size_t steps[] = {2, 15, 16, 17, 100, 1000, 4096, 100000, 300000, 3 << 20,
                          1 << 20, 200000, 5000, 300, 24, 3};
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; ++i) {
    const size_t n = opaque(steps[i]);
    unsigned char* q = realloc(p, n);
    CHECK(q != NULL);
    if (q == NULL) break;
    CHECK(aligned(q, 16));
    CHECK(malloc_usable_size(q) >= n);
    CHECK(filled(q, n < have ? n : have, 9));
    fill(q, n, 9);
    p = q;
    have = n;
  }
  // Failure leaves the block intact.
  errno = 0;
  CHECK(realloc(p, opaque(SIZE_MAX - 64)) == NULL && errno == ENOMEM);
  errno = 0;
  CHECK(realloc(p, opaque((size_t)1 << 52)) == NULL && errno == ENOMEM);
  CHECK(filled(p, have, 9));
  // realloc(p, 0) frees p and returns NULL (glibc's choice).
  void* r = realloc(p, opaque(0));
  CHECK(r == NULL);
  free(r);
  // Many small reallocs in a row (a growing string).
  char* s = NULL;
  size_t len = 0;
  for (int i = 0; i < 2000; ++i) {
    char* t = realloc(s, len + 2);
    CHECK(t != NULL);
    if (t == NULL) break;
    s = t;
    s[len++] = (char)('a' + i % 26);
    s[len] = 0;
  }
  int ok = 1;
  for (size_t i = 0; i < len; ++i) ok &= s[i] == (char)('a' + i % 26);
  CHECK(ok && len == 2000);
  free(s);
}

static void check_reallocarray(void) {
  int* p = reallocarray(NULL, opaque(10), sizeof(int));
  CHECK(p != NULL);
  for (int i = 0; i < 10; ++i) p[i] = i;
  int* q = reallocarray(p, opaque(1000), sizeof(int));
  CHECK(q != NULL);
  if (q != NULL) p = q;
  int ok = 1;
  for (int i = 0; i < 10; ++i) ok &= p[i] == i;
  CHECK(ok);
  errno = 0;
  CHECK(reallocarray(p, opaque(SIZE_MAX / 2), opaque(3)) == NULL && errno == ENOMEM);
  CHECK(p[9] == 9);
  errno = 0;
  CHECK(reallocarray(NULL, opaque(SIZE_MAX), opaque(2)) == NULL && errno == ENOMEM);
  free(p);
}

static void check_posix_memalign(void) {
  // Bad alignments: EINVAL, errno untouched, *out untouched.
  const size_t bad[] = {0, 1, 2, 4, 3, 12, 24, 48, 100, 4097};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    void* out = (void*)&out;
    errno = 1234;
    CHECK(posix_memalign(&out, opaque(bad[i]), 16) == EINVAL);
    CHECK(errno == 1234);
    CHECK(out == (void*)&out);
  }
  // Every power of two from 8 to 1 GiB, a few sizes each.
  for (size_t a = 8; a <= ((size_t)1 << 30); a <<= 1) {
    const size_t sizes[] = {0, 1, 100, a, 3 * a + 5};
    for (size_t k = 0; k < 5; ++k) {
      const size_t n = opaque(sizes[k]);
      if (n > ((size_t)1 << 26) && n != a) continue;  // keep the biggest runs small
      void* p = NULL;
      errno = 1234;
      const int rc = posix_memalign(&p, a, n);
      CHECK(rc == 0 && errno == 1234);
      if (rc != 0) {
        fprintf(stderr, "  posix_memalign(%zu, %zu) = %d\n", a, n, rc);
        continue;
      }
      CHECK(aligned(p, a) && aligned(p, 16));
      CHECK(malloc_usable_size(p) >= n);
      if (n > 0) {
        ((unsigned char*)p)[0] = 1;
        ((unsigned char*)p)[n - 1] = 2;
      }
      free(p);
    }
  }
  void* p = NULL;
  errno = 1234;
  CHECK(posix_memalign(&p, 64, opaque(SIZE_MAX - 100)) == ENOMEM);
  if (expect_strata) CHECK(errno == 1234);  // glibc 2.36 sets errno here; Strata never does
  CHECK(posix_memalign(&p, (size_t)1 << 20, opaque((size_t)1 << 52)) == ENOMEM);
  // An aligned block reallocated keeps its contents.
  CHECK(posix_memalign(&p, 256, 200) == 0);
  fill(p, 200, 5);
  unsigned char* q = realloc(p, opaque(5000));
  CHECK(q != NULL && filled(q, 200, 5));
  q = realloc(q, opaque(50));
  CHECK(q != NULL && filled(q, 50, 5));
  free(q);
}

static void check_aligned_alloc_family(void) {
  // aligned_alloc(alignment, size): a swapped argument order would show here.
  unsigned char* p = aligned_alloc(opaque(4096), opaque(10));
  CHECK(p != NULL && aligned(p, 4096) && malloc_usable_size(p) >= 10);
  free(p);
  p = aligned_alloc(opaque(64), opaque(100000));
  CHECK(p != NULL && aligned(p, 64) && malloc_usable_size(p) >= 100000);
  free(p);
  p = aligned_alloc(opaque((size_t)1 << 21), opaque(1 << 21));
  CHECK(p != NULL && aligned(p, (size_t)1 << 21));
  if (p != NULL) memset(p, 1, 1 << 21);
  free(p);
  p = aligned_alloc(opaque(8), opaque(3));
  CHECK(p != NULL && aligned(p, 8));
  free(p);
  errno = 0;
  CHECK(aligned_alloc(opaque(64), opaque(SIZE_MAX - 10)) == NULL && errno == ENOMEM);

  p = memalign(opaque(64), opaque(10));
  CHECK(p != NULL && aligned(p, 64));
  free(p);
  p = memalign(opaque(1 << 16), opaque(1));
  CHECK(p != NULL && aligned(p, 1 << 16));
  free(p);
  p = memalign(opaque(2), opaque(10));
  CHECK(p != NULL && aligned(p, 16));
  free(p);
  errno = 0;
  CHECK(memalign(opaque(64), opaque(SIZE_MAX - 10)) == NULL && errno == ENOMEM);

  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  p = valloc(opaque(1));
  CHECK(p != NULL && aligned(p, page));
  free(p);
  p = valloc(opaque(3 * page + 1));
  CHECK(p != NULL && aligned(p, page) && malloc_usable_size(p) >= 3 * page + 1);
  free(p);
  p = pvalloc(opaque(1));
  CHECK(p != NULL && aligned(p, page) && malloc_usable_size(p) >= page);
  if (p != NULL) memset(p, 7, page);  // pvalloc rounds the size up to a whole page
  free(p);
  errno = 0;
  CHECK(pvalloc(opaque(SIZE_MAX)) == NULL && errno == ENOMEM);
  errno = 0;
  CHECK(valloc(opaque(SIZE_MAX)) == NULL && errno == ENOMEM);
}

typedef void* (*malloc_fn)(size_t);
typedef void (*free_fn)(void*);
typedef void* (*calloc_fn)(size_t, size_t);
typedef void* (*realloc_fn)(void*, size_t);
typedef void* (*memalign_fn)(size_t, size_t);
typedef void (*free_sized_fn)(void*, size_t);
typedef void (*free_aligned_sized_fn)(void*, size_t, size_t);

// Entry points looked up at run time: those not in every glibc's headers, and glibc's
// __libc_* aliases, which must come from the same allocator as malloc.
static void check_extra_entry_points(void) {
  free_sized_fn fs = (free_sized_fn)dlsym(RTLD_DEFAULT, "free_sized");
  free_aligned_sized_fn fas = (free_aligned_sized_fn)dlsym(RTLD_DEFAULT, "free_aligned_sized");
  if (expect_strata) CHECK(fs != NULL && fas != NULL);
  if (fs != NULL) {
    void* p = malloc(opaque(100));
    fs(p, 100);
    fs(NULL, 0);
  }
  if (fas != NULL) {
    void* p = aligned_alloc(256, 1000);
    CHECK(p != NULL && aligned(p, 256));
    fas(p, 256, 1000);
  }

  malloc_fn lm = (malloc_fn)dlsym(RTLD_DEFAULT, "__libc_malloc");
  free_fn lf = (free_fn)dlsym(RTLD_DEFAULT, "__libc_free");
  calloc_fn lc = (calloc_fn)dlsym(RTLD_DEFAULT, "__libc_calloc");
  realloc_fn lr = (realloc_fn)dlsym(RTLD_DEFAULT, "__libc_realloc");
  memalign_fn lma = (memalign_fn)dlsym(RTLD_DEFAULT, "__libc_memalign");
  malloc_fn lv = (malloc_fn)dlsym(RTLD_DEFAULT, "__libc_valloc");
  malloc_fn lpv = (malloc_fn)dlsym(RTLD_DEFAULT, "__libc_pvalloc");
  CHECK(lm && lf && lc && lr && lma && lv && lpv);
  if (!(lm && lf && lc && lr && lma && lv && lpv)) return;
  if (expect_strata) {
    // The aliases must be the same allocator as malloc: same library.
    Dl_info a, b;
    CHECK(dladdr((void*)lm, &a) && dladdr(dlsym(RTLD_DEFAULT, "malloc"), &b) &&
          strcmp(a.dli_fname, b.dli_fname) == 0);
  }
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  unsigned char* p = lm(opaque(50));
  CHECK(p != NULL && aligned(p, 16) && malloc_usable_size(p) >= 50);
  fill(p, 50, 1);
  p = lr(p, opaque(5000));
  CHECK(p != NULL && filled(p, 50, 1));
  free(p);  // freed by the plain free: the same heap
  p = lc(opaque(10), opaque(10));
  CHECK(p != NULL && p[0] == 0 && p[99] == 0);
  lf(p);
  p = lma(opaque(128), opaque(10));
  CHECK(p != NULL && aligned(p, 128));
  free(p);
  p = lv(opaque(10));
  CHECK(p != NULL && aligned(p, page));
  lf(p);
  p = lpv(opaque(10));
  CHECK(p != NULL && aligned(p, page) && malloc_usable_size(p) >= page);
  lf(p);
}

static void check_statistics(void) {
  void* keep[1000];
  for (int i = 0; i < 1000; ++i) keep[i] = malloc(opaque(100));
  struct mallinfo2 info = mallinfo2();
  CHECK(info.arena > 0);
  CHECK(info.uordblks >= 1000 * 100);
  for (int i = 0; i < 1000; ++i) free(keep[i]);
  const int trimmed = malloc_trim(0);
  CHECK(trimmed == 0 || trimmed == 1);
  malloc_stats();  // prints on stderr; must not crash or allocate recursively
}

static void check_interleaved(void) {
  // Aligned and plain blocks of many sizes live together, freed in another order.
  enum { N = 2000 };
  static void* p[N];
  static size_t n[N];
  for (int i = 0; i < N; ++i) {
    n[i] = (size_t)(i * 37 % 3000);
    if (i % 3 == 0) {
      p[i] = aligned_alloc((size_t)32 << (i % 7), n[i]);
      CHECK(p[i] != NULL && aligned(p[i], (size_t)32 << (i % 7)));
    } else {
      p[i] = malloc(n[i]);
      CHECK(p[i] != NULL && aligned(p[i], 16));
    }
    if (p[i] != NULL) fill(p[i], n[i], (unsigned)i);
  }
  for (int i = 1; i < N; i += 2) {
    CHECK(p[i] == NULL || filled(p[i], n[i], (unsigned)i));
    free(p[i]);
  }
  for (int i = 0; i < N; i += 2) {
    CHECK(p[i] == NULL || filled(p[i], n[i], (unsigned)i));
    free(p[i]);
  }
}

int main(int argc, char** argv) {
  const char* expect = NULL;
  if (argc == 3 && strcmp(argv[1], "--expect") == 0) expect = argv[2];
  expect_strata = expect != NULL;

  Dl_info info;
  void* m = dlsym(RTLD_DEFAULT, "malloc");
  const char* from = (m != NULL && dladdr(m, &info) && info.dli_fname) ? info.dli_fname : "?";
  printf("malloc from %s\n", from);
  if (expect != NULL) CHECK(strstr(from, expect) != NULL);

  check_malloc();
  check_calloc();
  check_realloc();
  check_reallocarray();
  check_posix_memalign();
  check_aligned_alloc_family();
  check_extra_entry_points();
  check_statistics();
  check_interleaved();
  failures += run_cxx_checks();

  if (failures != 0) {
    printf("%d conformance failures\n", failures);
    return 1;
  }
  printf("conformance ok\n");
  return 0;
}
