/* attack_write_after_free SIZE: writes into an object after freeing it (a dangling pointer),
 * over the first 32 bytes, where free lists keep their links, then allocates that size
 * again: an allocator that follows the written link hands out an address the attacker
 * chose. */
#include "attack_common.h"

int main(int argc, char** argv) {
  const size_t n = at_size(argc, argv);
  char* a = at_malloc(n);
  char* b = at_malloc(n);
  at_memset(a, 1, n);
  at_free(b);
  at_free(a);
  at_memset(a, 0x41, 32);
  at_carry_on(n);
  return at_completed("write_after_free", n);
}
