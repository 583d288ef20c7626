/* A deliberately broken malloc for replay_test: every malloc(4000) returns the same block,
 * so two live 4000-byte objects overlap, and freeing that block does nothing; malloc(4001)
 * crashes (SIGILL). Everything else goes to glibc's own entry points. Preloaded into
 * strata-replayer, it must make a --verify replay report verify errors (the test that
 * --verify can fail) and a replay of malloc(4001) end as "crashed". */
#include <stddef.h>

extern void* __libc_malloc(size_t n);
extern void __libc_free(void* p);

static _Alignas(64) unsigned char shared_block[4096];

/* malloc(4000): the shared block; malloc(4001): a crash; anything else: glibc. */
void* malloc(size_t n) {
  if (n == 4001) __builtin_trap();
  return n == 4000 ? (void*)shared_block : __libc_malloc(n);
}

/* Frees anything but the shared block. */
void free(void* p) {
  if (p != (void*)shared_block) __libc_free(p);
}
