/* attack_overflow SIZE: writes 64 bytes past the end of an object (a heap buffer
 * overflow), over whatever follows: a neighbour, a header, a free-list link. Then frees
 * the object and its neighbour and carries on. */
#include "attack_common.h"

int main(int argc, char** argv) {
  const size_t n = at_size(argc, argv);
  char* a = at_malloc(n);
  char* b = at_malloc(n);
  at_memset(b, 2, n);
  at_memset(a, 0x41, n + 64);
  at_free(a);
  at_free(b);
  at_carry_on(n);
  return at_completed("overflow", n);
}
