/* dropin_calloc_sparse [COUNT]: COUNT callocs (default 20,000) of 4..64 KiB, each written
 * only in its first 64 bytes (and checked to be zero just after them), all live to the end.
 * Models programs that calloc big tables and use little of them: an allocator that knows
 * fresh pages from the kernel are already zero and skips writing zeros leaves the rest
 * unresident; one that clears every byte makes all of it resident. Peak RSS is the figure. */
#include "dropin_common.h"

/* Allocates the blocks, checks and writes their first bytes, then checks them all again. */
int main(int argc, char** argv) {
  const long count = di_arg(argc, argv, 1, 20000, "[COUNT]");
  unsigned char** block = di_check(malloc((size_t)count * sizeof *block), "table");
  uint64_t rng = 99, sum = 0;
  for (long i = 0; i < count; ++i) {
    const size_t n = splitmix_range(&rng, 4096, 65536);
    block[i] = di_check(calloc(1, n), "calloc block");
    for (int j = 64; j < 128; ++j)
      if (block[i][j] != 0) di_fail("calloc memory not zero", (uint64_t)i);
    memset(block[i], (int)(i & 0xff), 64);
  }
  for (long i = 0; i < count; ++i) {
    if (block[i][0] != (unsigned char)(i & 0xff) || block[i][63] != (unsigned char)(i & 0xff))
      di_fail("calloc block changed", (uint64_t)i);
    sum = sum * 31 + block[i][17];
    free(block[i]);
  }
  free(block);
  printf("calloc_sparse count=%ld checksum=%016llx\n", count, (unsigned long long)sum);
  di_report_malloc();
  return 0;
}
