/* A small program with a known allocation pattern, for `strata compare -- COMMAND`: a ring of
 * 512 live objects of varied sizes replaced in turn, some grown by realloc, some calloc'd.
 * Prints the checksum of what it wrote so the work cannot be optimised away. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  enum { kLive = 512, kRounds = 20000 };
  static char* ring[kLive];
  unsigned long sum = 0;
  unsigned seed = 12345;
  for (int i = 0; i < kRounds; ++i) {
    seed = seed * 1103515245u + 12345u;
    const size_t size = 8 + (seed >> 16) % 2000;
    const int slot = i % kLive;
    free(ring[slot]);
    ring[slot] = (i % 7 == 0) ? calloc(1, size) : malloc(size);
    if (ring[slot] == NULL) return 1;
    memset(ring[slot], i & 0xff, size);
    if (i % 13 == 0) {
      char* grown = realloc(ring[slot], size * 2);
      if (grown == NULL) return 1;
      ring[slot] = grown;
    }
    sum += (unsigned char)ring[slot][size - 1];
  }
  for (int i = 0; i < kLive; ++i) free(ring[i]);
  printf("checksum %lu\n", sum);
  return 0;
}
