/* attack_underflow SIZE: writes the 16 bytes just before an object (a negative index), where
 * allocators with inline headers keep the object's size and state, then frees it. */
#include "attack_common.h"

int main(int argc, char** argv) {
  const size_t n = at_size(argc, argv);
  char* keep = at_malloc(n);
  char* a = at_malloc(n);
  at_memset(a - 16, 0x41, 16);
  at_free(a);
  at_free(keep);
  at_carry_on(n);
  return at_completed("underflow", n);
}
