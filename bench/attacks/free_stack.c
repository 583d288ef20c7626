/* attack_free_stack SIZE: frees the address of a buffer on the stack (never from malloc),
 * as the "House of Spirit" does with a fake chunk: an allocator that believes it hands the
 * stack out as heap memory. The buffer is laid out like a heap object of SIZE (a plausible
 * size word before it), which is what such an attack writes there. */
#include "attack_common.h"

int main(int argc, char** argv) {
  const size_t n = at_size(argc, argv);
  _Alignas(64) unsigned char frame[8192];
  at_memset(frame, 0, sizeof frame);
  const size_t fake = n < 4096 ? n : 4096;
  uint64_t size_word = (uint64_t)(fake + 16) | 1;  /* in use, the previous one too */
  memcpy(frame + 56, &size_word, sizeof size_word);
  at_free(frame + 64);
  at_carry_on(n);
  return at_completed("free_stack", n);
}
