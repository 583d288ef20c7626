/* attack_double_free_interleaved SIZE: frees a, then b, then a again. A check that only
 * compares a freed pointer with the last one freed misses it; the free list then holds a
 * twice, and two mallocs return the same memory. */
#include "attack_common.h"

int main(int argc, char** argv) {
  const size_t n = at_size(argc, argv);
  char* a = at_malloc(n);
  char* b = at_malloc(n);
  at_memset(a, 1, n);
  at_memset(b, 2, n);
  at_free(a);
  at_free(b);
  at_free(a);
  char* x = at_malloc(n);
  char* y = at_malloc(n);
  char* z = at_malloc(n);
  if (x == z || y == z || x == y) printf("attack double_free_interleaved %zu: one block handed out twice\n", n);
  at_free(x);
  at_free(y);
  if (z != x && z != y) at_free(z);
  at_carry_on(n);
  return at_completed("double_free_interleaved", n);
}
