/* attack_free_global SIZE: frees an address in the program's static data, which the heap
 * never gave out. */
#include "attack_common.h"

static _Alignas(4096) unsigned char data[1 << 16];

int main(int argc, char** argv) {
  const size_t n = at_size(argc, argv);
  at_memset(data, 0, sizeof data);
  at_free(data + 4096);
  at_carry_on(n);
  return at_completed("free_global", n);
}
