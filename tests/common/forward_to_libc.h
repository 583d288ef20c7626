/* For the stand-in allocators of the tests: malloc, free, calloc and realloc defined by the
 * including library and handed to the C library's own, so that the library takes over malloc
 * (strata-probe sees malloc and free resolve to it) without being an allocator of its own.
 * Include it in one C file of a shared library. */
#ifndef STRATA_TEST_FORWARD_TO_LIBC_H
#define STRATA_TEST_FORWARD_TO_LIBC_H
#include <stddef.h>

extern void* __libc_malloc(size_t);
extern void __libc_free(void*);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);
void* malloc(size_t n) { return __libc_malloc(n); }
void free(void* p) { __libc_free(p); }
void* calloc(size_t n, size_t m) { return __libc_calloc(n, m); }
void* realloc(void* p, size_t n) { return __libc_realloc(p, n); }

#endif
