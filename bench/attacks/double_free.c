/* attack_double_free SIZE: frees an object twice in a row. A double free lets two later
 * mallocs return the same memory, so one object overwrites another (the classic step to an
 * arbitrary write). */
#include "attack_common.h"

int main(int argc, char** argv) {
  const size_t n = at_size(argc, argv);
  char* p = at_malloc(n);
  at_memset(p, 1, n);
  at_free(p);
  at_free(p);
  at_carry_on(n);
  return at_completed("double_free", n);
}
