/* fidelity_calloc_large [ARRAYS]: ARRAYS (default 36) callocs of 16-48 MiB arrays (about
 * 1.1 GiB allocated, a few hundred MiB live at the end), each touched in a small part (a
 * dense head and a sparse stride over its body) and read back over many passes; two arrays
 * in three are freed again. Untouched pages of a fresh calloc
 * never become resident; an allocator or a replay that writes them does. */
#include "fidelity_common.h"

int main(int argc, char** argv) {
  const long arrays = fid_size_arg(argc, argv, 36, "ARRAYS");
  uint64_t rng = 7, sum = 0xcbf29ce484222325ull;
  double** live = fid_check(calloc((size_t)arrays, sizeof(double*)), "table");
  size_t* counts = fid_check(calloc((size_t)arrays, sizeof(size_t)), "table");
  for (long i = 0; i < arrays; ++i) {
    const size_t bytes = (size_t)splitmix_range(&rng, 16, 48) << 20;
    const size_t n = bytes / sizeof(double);
    double* a = fid_check(calloc(n, sizeof(double)), "calloc");
    /* A dense head (64 KiB) and one value per 256 KiB: about 1.5 % of the pages. */
    for (size_t k = 0; k < 8192 && k < n; ++k) a[k] = (double)(k + (size_t)i);
    for (size_t k = 0; k < n; k += 32768) a[k] += 1.0;
    /* The work: passes over the touched part, as a sparse solver would. */
    double s = 0;
    for (int pass = 0; pass < 400; ++pass) {
      for (size_t k = 0; k < n; k += 32768) s += a[k] * pass;
      for (size_t k = 0; k < 8192 && k < n; ++k) s += a[k];
    }
    sum = fid_mix_u64(sum, (uint64_t)s);
    if (i % 3 != 0) {
      free(a);
    } else {
      live[i] = a;
      counts[i] = n;
    }
  }
  for (long i = 0; i < arrays; ++i)
    if (live[i] != NULL) sum = fid_mix_u64(sum, (uint64_t)live[i][counts[i] - 1]);
  printf("calloc_large arrays=%ld checksum=%016llx\n", arrays, (unsigned long long)sum);
  for (long i = 0; i < arrays; ++i) free(live[i]);
  free(live);
  free(counts);
  return 0;
}
