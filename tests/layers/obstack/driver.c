/* One driver for the obstack differential test, compiled twice as C: with STRATA_DRIVER it
 * uses <strata/obstack.h> and defines run_strata, without it glibc's <obstack.h> and
 * run_glibc. Both perform the same seeded sequence of grow / 1grow / blank (also negative) /
 * make_room + 1grow_fast / int_grow / ptr_grow / finish / alloc / copy / copy0 /
 * free-to-mark, and log every finished object's size and contents, every free, and at
 * checkpoints the growing object's size and the contents of every live object, so the two
 * logs are equal exactly when the implementations behave alike. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef STRATA_DRIVER
#include <strata/obstack.h>
#define RUN run_strata
#else
#include <obstack.h>
#define RUN run_glibc
#endif

#define obstack_chunk_alloc malloc
#define obstack_chunk_free free

typedef void (*emit_fn)(void *ctx, const void *data, size_t n);

#define MAX_MARKS 4096

struct driver {
  struct obstack ob;
  uint64_t rng;
  emit_fn emit;
  void *ctx;
  char *marks[MAX_MARKS];
  size_t sizes[MAX_MARKS];
  size_t nmarks;
  unsigned char buf[8192];
};

static uint64_t next(struct driver *d) {
  d->rng ^= d->rng << 13;
  d->rng ^= d->rng >> 7;
  d->rng ^= d->rng << 17;
  return d->rng;
}

/* A record: a tag, a size, then n bytes of data. */
static void put(struct driver *d, char tag, const void *data, size_t n) {
  uint64_t size = n;
  d->emit(d->ctx, &tag, 1);
  d->emit(d->ctx, &size, sizeof size);
  if (n != 0) d->emit(d->ctx, data, n);
}

static size_t pick_size(struct driver *d) {
  return (size_t)(next(d) % 16 == 0 ? next(d) % 6000 : next(d) % 60);
}

static void fill(struct driver *d, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) d->buf[i] = (unsigned char)next(d);
}

/* Records a finished object of n bytes at p as a mark for later frees. */
static void finished(struct driver *d, char tag, void *p, size_t n) {
  put(d, tag, p, n);
  d->marks[d->nmarks] = (char *)p;
  d->sizes[d->nmarks] = n;
  ++d->nmarks;
}

int RUN(unsigned seed, int ops, emit_fn emit, void *ctx) {
  struct driver *d = (struct driver *)calloc(1, sizeof *d);
  int variant = (int)(seed % 4);
  int i;
  if (d == NULL) return 0;
  d->rng = 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed * 0x100000001B3ull);
  if (d->rng == 0) d->rng = 1;
  d->emit = emit;
  d->ctx = ctx;
  if (variant == 1) {
    obstack_begin(&d->ob, 200);
  } else {
    obstack_init(&d->ob);
  }
  if (variant == 2) obstack_alignment_mask(&d->ob) = 0;
  if (variant == 3) obstack_chunk_size(&d->ob) = 65536;
  for (i = 0; i < ops; ++i) {
    unsigned op = (unsigned)(next(d) % 17);
    size_t size = obstack_object_size(&d->ob);
    size_t n;
    if (d->nmarks == MAX_MARKS) op = 14;
    switch (op) {
      case 0: case 1: case 2:
        n = pick_size(d);
        fill(d, n);
        obstack_grow(&d->ob, d->buf, n);
        break;
      case 3:
        obstack_1grow(&d->ob, (char)next(d));
        break;
      case 4:
        n = (size_t)(next(d) % 100);
        obstack_make_room(&d->ob, n);
        while (n-- > 0) obstack_1grow_fast(&d->ob, (char)next(d));
        break;
      case 5:
        n = pick_size(d);
        fill(d, n);
        obstack_blank(&d->ob, (int)n);
        if (n != 0) memcpy(obstack_next_free(&d->ob) - n, d->buf, n);
        break;
      case 6:
        n = (size_t)(next(d) % (size + 1));
        obstack_blank(&d->ob, -(int)n);
        break;
      case 7:
        if (obstack_alignment_mask(&d->ob) != 0 && size % 8 == 0) {
          if (next(d) % 2) {
            obstack_int_grow(&d->ob, (int)next(d));
          } else {
            obstack_ptr_grow(&d->ob, (void *)(uintptr_t)(next(d) & 0xFFFFFFF0u));
          }
        }
        break;
      case 8: case 9: {
        void *p = obstack_finish(&d->ob);
        finished(d, 'O', p, size);
        break;
      }
      case 10:
        n = pick_size(d);
        fill(d, n);
        {
          char *p = (char *)obstack_alloc(&d->ob, n);
          if (n != 0) memcpy(p + size, d->buf, n);
          finished(d, 'A', p, size + n);
        }
        break;
      case 11:
        n = pick_size(d);
        fill(d, n);
        finished(d, 'C', obstack_copy(&d->ob, d->buf, n), size + n);
        break;
      case 12:
        n = pick_size(d);
        fill(d, n);
        finished(d, 'Z', obstack_copy0(&d->ob, d->buf, n), size + n + 1);
        break;
      case 13: case 14:
        if (d->nmarks != 0) {
          size_t k = (size_t)(next(d) % d->nmarks);
          uint64_t at = k;
          obstack_free(&d->ob, d->marks[k]);
          d->nmarks = k;
          put(d, 'F', &at, sizeof at);
        }
        break;
      default: {
        size_t k;
        uint64_t growing = obstack_object_size(&d->ob);
        put(d, 'S', &growing, sizeof growing);
        put(d, 'G', obstack_base(&d->ob), (size_t)growing);
        for (k = 0; k < d->nmarks; ++k) put(d, 'L', d->marks[k], d->sizes[k]);
        break;
      }
    }
  }
  {
    size_t k;
    for (k = 0; k < d->nmarks; ++k) put(d, 'L', d->marks[k], d->sizes[k]);
  }
  obstack_free(&d->ob, NULL);
  free(d);
  return 1;
}
