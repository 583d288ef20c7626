/* fidelity_calloc_small [COUNT]: COUNT (default 20,000) callocs of 4-64 KiB, each touched
 * only in its first bytes, all live at the end. An allocator that knows fresh pages from
 * the kernel are already zero does not write them, so the untouched tail of each block
 * costs it no resident memory; one that clears every block pays for all of it. */
#include "fidelity_common.h"

int main(int argc, char** argv) {
  const long count = fid_size_arg(argc, argv, 20000, "COUNT");
  uint64_t rng = 42, sum = 0xcbf29ce484222325ull;
  unsigned char** blocks = fid_check(malloc(sizeof(unsigned char*) * (size_t)count), "table");
  for (long i = 0; i < count; ++i) {
    const size_t size = (size_t)splitmix_range(&rng, 4096, 65536);
    unsigned char* b = fid_check(calloc(1, size), "calloc");
    /* A header in the first bytes, and the zeros after it that the program relies on
     * (read within the first cache line only: the rest of the block stays untouched). */
    for (int k = 0; k < 16; ++k) b[k] = (unsigned char)(i + k);
    sum = fid_mix(sum, b + 16, 48);
    blocks[i] = b;
  }
  for (long i = 0; i < count; ++i) sum = fid_mix(sum, blocks[i], 16);
  printf("calloc_small count=%ld checksum=%016llx\n", count, (unsigned long long)sum);
  return 0; /* everything still live at exit, on purpose */
}
