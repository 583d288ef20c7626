/* compare_calloc_program: callocs 16 blocks of 8 MiB, writes one byte in one page of each,
 * keeps them all to the end and prints a checksum. Live, an allocator that takes fresh pages
 * from the kernel for blocks this large leaves 127 of every 128 pages untouched; a replay that
 * wrote every byte would count all 128 MiB. */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  enum { kBlocks = 16, kSize = 8 << 20 };
  static unsigned char* blocks[kBlocks];
  unsigned long sum = 0;
  for (int i = 0; i < kBlocks; ++i) {
    blocks[i] = calloc(1, kSize);
    if (blocks[i] == NULL) return 1;
    blocks[i][3 * 4096 + 17] = (unsigned char)(i + 1);
  }
  for (int i = 0; i < kBlocks; ++i) sum += blocks[i][3 * 4096 + 17] + blocks[i][kSize - 1];
  printf("checksum %lu\n", sum);
  for (int i = 0; i < kBlocks; ++i) free(blocks[i]);
  return 0;
}
