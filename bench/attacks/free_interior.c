/* attack_free_interior SIZE: frees a pointer 16 bytes into an object (an off-by-some
 * pointer, or an attacker-chosen one). An allocator that trusts it may hand out memory
 * overlapping the object, or corrupt its own books. */
#include "attack_common.h"

int main(int argc, char** argv) {
  const size_t n = at_size(argc, argv);
  char* p = at_malloc(n);
  at_memset(p, 1, n);
  at_free(p + 16);
  at_carry_on(n);
  at_free(p);
  return at_completed("free_interior", n);
}
