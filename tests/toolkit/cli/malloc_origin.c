/* A program for the `strata build` tests: it allocates (small to large, calloc, realloc,
 * aligned, strdup), checks the memory, frees it all, and prints "malloc=FILE" and "free=FILE",
 * the objects malloc and free resolve to, so a test sees that a built library really serves
 * the program's allocations. C, and never sanitized: a sanitizer's own malloc would answer. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void where(const char* key, const char* symbol) {
  void* f = dlsym(RTLD_DEFAULT, symbol);
  Dl_info info;
  if (f != NULL && dladdr(f, &info) != 0 && info.dli_fname != NULL)
    printf("%s=%s\n", key, info.dli_fname);
  else
    printf("%s=\n", key);
}

int main(void) {
  enum { kCount = 2000 };
  static unsigned char* blocks[kCount];
  for (int i = 0; i < kCount; ++i) {
    const size_t n = 1 + (size_t)(i * 97) % (i % 100 == 0 ? 300000 : 2000);
    blocks[i] = malloc(n);
    if (blocks[i] == NULL) return 2;
    memset(blocks[i], i & 0xff, n);
  }
  for (int i = 0; i < kCount; i += 2) {
    blocks[i] = realloc(blocks[i], 5000);
    if (blocks[i] == NULL || blocks[i][0] != (unsigned char)(i & 0xff)) return 3;
  }
  unsigned* zeros = calloc(1000, sizeof *zeros);
  for (int i = 0; zeros != NULL && i < 1000; ++i)
    if (zeros[i] != 0) return 4;
  void* aligned = NULL;
  if (posix_memalign(&aligned, 4096, 100) != 0 || ((uintptr_t)aligned & 4095) != 0) return 5;
  char* copy = strdup("strata build");
  if (copy == NULL || strcmp(copy, "strata build") != 0) return 6;
  for (int i = 0; i < kCount; ++i) free(blocks[i]);
  free(zeros);
  free(aligned);
  free(copy);
  where("malloc", "malloc");
  where("free", "free");
  return 0;
}
