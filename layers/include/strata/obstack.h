/* <strata/obstack.h>: the GNU obstack interface on Strata's ObstackHeap (library
 * strata_obstack). A C program written for glibc's <obstack.h> builds and behaves the same with
 * this header and -lstrata_obstack: define obstack_chunk_alloc and obstack_chunk_free (usually
 * malloc and free) before using obstack_init or obstack_begin, then use the obstack_* names
 * as documented in the glibc manual ("Obstacks").
 *
 * Every symbol the library exports starts with strata_; the obstack_* names are macros, so
 * a program may link both this library and glibc without a clash (but may not include both
 * headers in one translation unit: each defines struct obstack).
 *
 * Differences from glibc, none visible to a correct program: the obstack_* operations are
 * function calls (not inline macros), struct obstack exposes only chunk_size and
 * alignment_mask (both may be assigned, as the glibc manual allows), and the _fast variants
 * check for room like the ordinary ones. obstack_free of a pointer the obstack does not hold
 * aborts, as glibc does; running out of memory calls obstack_alloc_failed_handler (by default:
 * print "memory exhausted" and exit with obstack_exit_failure), and if the handler returns,
 * the operation does nothing (allocation functions return NULL). */
#ifndef STRATA_OBSTACK_H
#define STRATA_OBSTACK_H

#include <stddef.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Room for the C++ object (an ObstackHeap over the user's chunk functions). */
#define STRATA_OBSTACK_IMPL_BYTES 128

struct obstack {
  long chunk_size;    /* size of the chunks taken from now on (obstack_chunk_size) */
  int alignment_mask; /* finished objects are aligned to mask + 1 (obstack_alignment_mask) */
  union {
    void *strata_align_pointer;
    long double strata_align_long_double;
    unsigned char strata_bytes[STRATA_OBSTACK_IMPL_BYTES];
  } strata_impl;
};

/* Set up h: first chunk of `size` bytes (0: 4064), objects aligned to `alignment` (0: 16).
 * Returns 1, or 0 (after calling the failure handler) when the first chunk cannot be had. */
int strata_obstack_begin(struct obstack *h, size_t size, size_t alignment,
                         void *(*chunkfun)(size_t), void (*freefun)(void *));
/* The same with an extra first argument passed to both chunk functions. */
int strata_obstack_begin_1(struct obstack *h, size_t size, size_t alignment,
                           void *(*chunkfun)(void *, size_t), void (*freefun)(void *, void *),
                           void *arg);

void strata_obstack_grow(struct obstack *h, const void *data, size_t n);
void strata_obstack_grow0(struct obstack *h, const void *data, size_t n);
void strata_obstack_1grow(struct obstack *h, int c);
void strata_obstack_ptr_grow(struct obstack *h, const void *p);
void strata_obstack_int_grow(struct obstack *h, int v);
void strata_obstack_blank(struct obstack *h, ptrdiff_t n); /* n < 0 shrinks the object */
void strata_obstack_make_room(struct obstack *h, size_t n);
void *strata_obstack_finish(struct obstack *h);
void *strata_obstack_alloc(struct obstack *h, size_t n);
void *strata_obstack_copy(struct obstack *h, const void *data, size_t n);
void *strata_obstack_copy0(struct obstack *h, const void *data, size_t n);
/* Frees obj and everything allocated after it; obj == NULL frees everything (h must then
 * be set up again before use). */
void strata_obstack_free(struct obstack *h, void *obj);
size_t strata_obstack_object_size(const struct obstack *h);
size_t strata_obstack_room(const struct obstack *h);
void *strata_obstack_base(const struct obstack *h);
char *strata_obstack_next_free(const struct obstack *h);
size_t strata_obstack_memory_used(const struct obstack *h);
int strata_obstack_empty_p(const struct obstack *h);

/* Called when a chunk cannot be had; should not return. Settable, as in glibc. */
extern void (*strata_obstack_alloc_failed_handler)(void);
/* Exit status of the default handler (EXIT_FAILURE unless changed). */
extern int strata_obstack_exit_failure;

#define obstack_alloc_failed_handler strata_obstack_alloc_failed_handler
#define obstack_exit_failure strata_obstack_exit_failure

#define obstack_init(h)                                                   \
  strata_obstack_begin((h), 0, 0, (void *(*)(size_t))(obstack_chunk_alloc), \
                       (void (*)(void *))(obstack_chunk_free))
#define obstack_begin(h, size)                                                   \
  strata_obstack_begin((h), (size_t)(size), 0, (void *(*)(size_t))(obstack_chunk_alloc), \
                       (void (*)(void *))(obstack_chunk_free))
#define obstack_specify_allocation(h, size, alignment, chunkfun, freefun)           \
  strata_obstack_begin((h), (size_t)(size), (size_t)(alignment),                    \
                       (void *(*)(size_t))(chunkfun), (void (*)(void *))(freefun))
#define obstack_specify_allocation_with_arg(h, size, alignment, chunkfun, freefun, arg) \
  strata_obstack_begin_1((h), (size_t)(size), (size_t)(alignment),                      \
                         (void *(*)(void *, size_t))(chunkfun),                         \
                         (void (*)(void *, void *))(freefun), (arg))

#define obstack_chunk_size(h) ((h)->chunk_size)
#define obstack_alignment_mask(h) ((h)->alignment_mask)
#define obstack_base(h) strata_obstack_base(h)
#define obstack_next_free(h) strata_obstack_next_free(h)
#define obstack_object_size(h) ((unsigned)strata_obstack_object_size(h))
#define obstack_room(h) ((unsigned)strata_obstack_room(h))
#define obstack_memory_used(h) ((int)strata_obstack_memory_used(h))
#define obstack_empty_p(h) strata_obstack_empty_p(h)

#define obstack_grow(h, data, n) strata_obstack_grow((h), (data), (size_t)(n))
#define obstack_grow0(h, data, n) strata_obstack_grow0((h), (data), (size_t)(n))
#define obstack_1grow(h, c) strata_obstack_1grow((h), (c))
#define obstack_ptr_grow(h, p) strata_obstack_ptr_grow((h), (p))
#define obstack_int_grow(h, v) strata_obstack_int_grow((h), (v))
#define obstack_blank(h, n) strata_obstack_blank((h), (ptrdiff_t)(n))
#define obstack_make_room(h, n) strata_obstack_make_room((h), (size_t)(n))
#define obstack_1grow_fast(h, c) strata_obstack_1grow((h), (c))
#define obstack_ptr_grow_fast(h, p) strata_obstack_ptr_grow((h), (p))
#define obstack_int_grow_fast(h, v) strata_obstack_int_grow((h), (v))
#define obstack_blank_fast(h, n) strata_obstack_blank((h), (ptrdiff_t)(n))

#define obstack_finish(h) strata_obstack_finish(h)
#define obstack_alloc(h, n) strata_obstack_alloc((h), (size_t)(n))
#define obstack_copy(h, data, n) strata_obstack_copy((h), (data), (size_t)(n))
#define obstack_copy0(h, data, n) strata_obstack_copy0((h), (data), (size_t)(n))
#define obstack_free(h, obj) strata_obstack_free((h), (obj))

#ifdef __cplusplus
}
#endif

#endif /* STRATA_OBSTACK_H */
