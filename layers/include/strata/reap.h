/* <strata/reap.h>: reaps from C. A reap is a region (every object is freed at once by
 * reap_clear or reap_destroy) that can also free single objects (reap_free), whose memory
 * later allocations reuse. Reaps nest: a reap created with a parent is destroyed when its
 * parent is cleared or destroyed. Objects are 16-byte aligned. Library: -lstrata_reap.
 *
 * Not thread-safe: a reap (and its tree) must be used by one thread at a time.
 *
 * Bad input (both debug and release builds; debug means built without NDEBUG or with
 * AddressSanitizer):
 *   - reap_destroy(NULL), reap_clear(NULL), reap_free(r, NULL) do nothing.
 *   - reap_calloc / reap_realloc whose size overflows (count * size, or sizes near SIZE_MAX),
 *     and any failed allocation: NULL with errno = ENOMEM.
 *   - reap_free(r, p) / reap_realloc(r, p, n) / reap_size(r, p) where p is not an object r
 *     handed out (a foreign pointer, an interior pointer, an object of another reap, even a
 *     parent or child) or was already freed: the reap is not changed. reap_free ignores p,
 *     reap_realloc returns NULL with errno = EINVAL, reap_size returns 0. Debug builds also
 *     print "strata reap: ... <address> ..." to stderr. How it is detected: release builds
 *     check that p is 16-aligned, lies in one of r's chunks with room for its block, and
 *     that the block's boundary tag says "in use" (a double free finds it clear); debug
 *     builds walk the chunk's blocks and accept only the exact start of a live block.
 *     In release builds a pointer into the middle of a live object whose bytes before it
 *     happen to look like an in-use tag, or a double free of memory that has meanwhile been
 *     handed out again as part of another object, cannot be told apart and is freed.
 *   - Use after reap_clear / reap_destroy / reap_free is undefined; built with
 *     AddressSanitizer it is reported.
 */
#ifndef STRATA_REAP_H
#define STRATA_REAP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strata_reap strata_reap;

/* A new empty reap; a child of parent when parent is not NULL. NULL when out of memory. */
strata_reap *reap_create(strata_reap *parent);
/* size bytes (16-aligned); NULL with errno = ENOMEM on failure. reap_malloc(r, 0) returns a
 * unique minimum-size object. */
void *reap_malloc(strata_reap *r, size_t size);
/* count * size zeroed bytes; NULL with errno = ENOMEM on failure or overflow. */
void *reap_calloc(strata_reap *r, size_t count, size_t size);
/* Resizes p (NULL: like reap_malloc; size 0: frees p and returns NULL). On failure NULL and
 * p is untouched. */
void *reap_realloc(strata_reap *r, void *p, size_t size);
/* Frees p for reuse by later allocations of r. */
void reap_free(strata_reap *r, void *p);
/* The usable size of p (at least what was asked for). */
size_t reap_size(strata_reap *r, const void *p);
/* Runs the cleanups (newest first), destroys the children, frees every object; r stays
 * usable. */
void reap_clear(strata_reap *r);
/* Like reap_clear, then gives all of r's memory back and destroys r. */
void reap_destroy(strata_reap *r);
/* Registers fn(arg) to run on reap_clear / reap_destroy, newest first. 0 on success, -1
 * (errno = ENOMEM) when out of memory. */
int reap_cleanup_register(strata_reap *r, void (*fn)(void *), void *arg);

/* The reaps paper's interface, over the above: a reap is a void * variable. */
/* *reap = a new reap, a child of *parent when parent and *parent are not NULL. */
void reapCreate(void **reap, void **parent);
/* Destroys *reap and sets *reap to NULL. */
void reapDestroy(void **reap);
/* Frees every object of *reap. */
void reapFreeAll(void **reap);
void *reapMalloc(void **reap, size_t size);
void reapFree(void **reap, void *p);

#ifdef __cplusplus
}
#endif

#endif /* STRATA_REAP_H */
