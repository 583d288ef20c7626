/* The region emulator: the region API (create, allocate, clear, destroy, with nesting) over
 * the C library's plain malloc and free, so that a program written for regions can run on
 * whatever general-purpose allocator the process has (glibc, or one put in with LD_PRELOAD)
 * and be compared against real regions and reaps.
 *
 * Every object is one malloc call of its own; the region remembers it out of band, in a
 * growable array of pointers (itself malloc'ed, doubled when full: amortised O(1) per
 * allocation, one pointer of overhead per object), never in a header next to the object. So
 * the last access to an object is the program's, and clear/destroy is one walk that calls
 * free on each recorded pointer. Child regions are kept in a list and go with their parent.
 *
 * Library: strata_region (shared) or strata_region_static (static, same OUTPUT_NAME);
 * link with -lstrata_region. Compiles as C (C99 or later) and as C++.
 *
 *   strata_region *region_create(strata_region *parent);
 *       A new, empty region. With a parent, it is a child of that region: cleared away and
 *       destroyed with it. NULL (errno = ENOMEM) if out of memory.
 *   void *region_alloc(strata_region *r, size_t size);
 *       size bytes (uninitialised), aligned as malloc aligns, owned by r until r is cleared
 *       or destroyed. size 0 gives a distinct, non-NULL pointer (to no usable bytes).
 *   void *region_calloc(strata_region *r, size_t count, size_t size);
 *       count * size zeroed bytes; NULL with errno = ENOMEM if the product overflows.
 *   char *region_strdup(strata_region *r, const char *s);
 *       A copy of the NUL-terminated string s, owned by r.
 *   void region_clear(strata_region *r);
 *       Frees every object of r and destroys every child region (as APR's pool clear does);
 *       r stays usable and keeps its record array for reuse. NULL: no-op.
 *   void region_destroy(strata_region *r);
 *       Destroys r's children (all descendants), frees every object of r, unlinks r from its
 *       parent and frees r itself. NULL: no-op. Iterative: any nesting depth is fine.
 *   size_t region_object_count(const strata_region *r);
 *       Objects allocated in r (not in its children) since it was created or last cleared.
 *   size_t region_live_bytes(const strata_region *r);
 *       Sum of the sizes requested for those objects (calloc: count * size; strdup:
 *       strlen + 1), exact, without malloc's rounding.
 *
 * Bad input: a size that cannot be allocated (count * size overflowing, or more than
 * PTRDIFF_MAX bytes) returns NULL with errno = ENOMEM without calling malloc. If malloc fails
 * (or growing the record does), the call returns NULL with errno = ENOMEM and the region is
 * unchanged and still valid. Passing NULL as the region to an allocating call returns NULL
 * with errno = EINVAL; the counts of NULL are 0.
 *
 * Threads: a region is not thread-safe: calls on one region (and on its parent or
 * children, since create and destroy update the parent's child list) must not overlap.
 * Regions in unrelated trees may be used from different threads at the same time; the
 * thread-safety of the objects' memory is that of the process's malloc.
 */
#ifndef STRATA_REGION_H
#define STRATA_REGION_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strata_region strata_region;

strata_region *region_create(strata_region *parent);
void *region_alloc(strata_region *r, size_t size);
void *region_calloc(strata_region *r, size_t count, size_t size);
char *region_strdup(strata_region *r, const char *s);
void region_clear(strata_region *r);
void region_destroy(strata_region *r);
size_t region_object_count(const strata_region *r);
size_t region_live_bytes(const strata_region *r);

#ifdef __cplusplus
}
#endif

#endif /* STRATA_REGION_H */
