/* attack_realloc_freed SIZE: reallocs an object that was already freed, which copies from
 * and frees it a second time. */
#include "attack_common.h"

int main(int argc, char** argv) {
  const size_t n = at_size(argc, argv);
  char* p = at_malloc(n);
  at_memset(p, 1, n);
  at_free(p);
  char* q = at_realloc(p, 2 * n);
  at_carry_on(n);
  at_free(q);
  return at_completed("realloc_freed", n);
}
