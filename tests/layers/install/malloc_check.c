/* Checks that the process's malloc is a given library's (linked, or put in with LD_PRELOAD),
 * and that it works. Usage: malloc_check LIBRARY_FILE_NAME [USABLE_SIZE_OF_100]
 * The library must define malloc, free, realloc, calloc and malloc_usable_size as the
 * symbols the dynamic linker finds first; with USABLE_SIZE_OF_100, malloc_usable_size of a
 * 100-byte request must be that (which tells one heap composition from another).
 * Prints what failed and exits 1 if anything is off. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                           \
  do {                                                                        \
    if (!(cond)) {                                                            \
      fprintf(stderr, "malloc_check: check failed: %s (line %d)\n", #cond, __LINE__); \
      return 1;                                                               \
    }                                                                         \
  } while (0)

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash != NULL ? slash + 1 : path;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s LIBRARY_FILE_NAME [USABLE_SIZE_OF_100]\n", argv[0]);
    return 2;
  }
  const char *want = argv[1];
  static const char *const names[] = {"malloc", "free", "realloc", "calloc",
                                      "malloc_usable_size"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    void *sym = dlsym(RTLD_DEFAULT, names[i]);
    Dl_info info;
    if (sym == NULL || dladdr(sym, &info) == 0 || info.dli_fname == NULL) {
      fprintf(stderr, "malloc_check: cannot locate %s\n", names[i]);
      return 1;
    }
    if (strcmp(base_name(info.dli_fname), want) != 0) {
      fprintf(stderr, "malloc_check: %s comes from %s, expected %s\n", names[i], info.dli_fname,
              want);
      return 1;
    }
  }

  char *p = malloc(100);
  CHECK(p != NULL && (uintptr_t)p % 16 == 0);
  if (argc > 2) {
    size_t expected = (size_t)strtoul(argv[2], NULL, 10);
    if (malloc_usable_size(p) != expected) {
      fprintf(stderr, "malloc_check: malloc_usable_size(malloc(100)) = %zu, expected %zu\n",
              malloc_usable_size(p), expected);
      return 1;
    }
  }
  for (int i = 0; i < 100; ++i) p[i] = (char)i;
  p = realloc(p, 100000);
  CHECK(p != NULL);
  for (int i = 0; i < 100; ++i) CHECK(p[i] == (char)i);
  p = realloc(p, 10);
  CHECK(p != NULL);
  for (int i = 0; i < 10; ++i) CHECK(p[i] == (char)i);
  free(p);
  int *z = calloc(1000, sizeof(int));
  CHECK(z != NULL);
  for (int i = 0; i < 1000; ++i) CHECK(z[i] == 0);
  free(z);
  /* Many live objects of mixed sizes, each filled and checked before it is freed. */
  enum { kCount = 2000 };
  static unsigned char *objects[kCount];
  for (int i = 0; i < kCount; ++i) {
    size_t n = (size_t)(i * 37 % 3000) + 1;
    objects[i] = malloc(n);
    CHECK(objects[i] != NULL && (uintptr_t)objects[i] % 16 == 0 && malloc_usable_size(objects[i]) >= n);
    memset(objects[i], (unsigned char)i, n);
  }
  for (int i = 0; i < kCount; ++i) {
    size_t n = (size_t)(i * 37 % 3000) + 1;
    for (size_t j = 0; j < n; ++j) CHECK(objects[i][j] == (unsigned char)i);
    free(objects[i]);
  }
  free(NULL);
  printf("malloc from %s: ok\n", want);
  return 0;
}
