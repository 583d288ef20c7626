/* A program whose peak memory under glibc depends on one setting: it frees a 4 MiB block
 * (glibc then raises its mmap threshold to 4 MiB), keeps 40 blocks of 512 KiB with a small
 * block after each, frees the big ones (holes the small ones pin) and then allocates 40
 * blocks of 768 KiB, which fit none of the holes. With glibc's defaults the heap holds both
 * generations (about 50 MiB); with a fixed mmap_threshold below 512 KiB every big block is
 * its own mapping, given back when freed (about 30 MiB). Every byte is written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void* take(size_t n) {
  char* p = malloc(n);
  if (p == NULL) {
    fprintf(stderr, "tune_program: out of memory\n");
    exit(1);
  }
  memset(p, 1, n);
  return p;
}

int main(void) {
  enum { kBlocks = 40 };
  void* big[kBlocks];
  void* pins[kBlocks];
  void* next[kBlocks];
  free(take(4u << 20));
  for (int i = 0; i < kBlocks; ++i) {
    big[i] = take(512u << 10);
    pins[i] = take(64);
  }
  for (int i = 0; i < kBlocks; ++i) free(big[i]);
  for (int i = 0; i < kBlocks; ++i) next[i] = take(768u << 10);
  unsigned long sum = 0;
  for (int i = 0; i < kBlocks; ++i) sum += ((unsigned char*)next[i])[i];
  for (int i = 0; i < kBlocks; ++i) {
    free(next[i]);
    free(pins[i]);
  }
  printf("%lu\n", sum);
  return 0;
}
