/* Shared by the attack programs (bench/attacks/, run by bench/attack_suite.py; see
 * bench/README.md): each program commits one kind of heap misuse on an object of the size
 * its argument names, then keeps using the heap as a program would, and says so if it got
 * to the end. An allocator that stops it (abort with a report, or a fault) has caught or at
 * least stopped the misuse; one that lets it finish has missed it.
 *
 * The misuse goes through calls the compiler cannot see through (a volatile pointer to free,
 * an opaque copy), so it is not folded away or warned about at build time: the allocator
 * under LD_PRELOAD is what meets it. */
#ifndef STRATA_ATTACK_COMMON_H
#define STRATA_ATTACK_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sizes every attack is tried at: a tiny object (the hottest classes of every
 * allocator), a page-sized one, and a large one (glibc and others map these apart).
 * "which" instead prints the library malloc comes from (the runner's check that a preload
 * took over) and exits. */
static inline size_t at_size(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "which") == 0) {
    Dl_info info;
    void* (*volatile m)(size_t) = malloc;
    printf("malloc %s\n", dladdr((void*)m, &info) != 0 && info.dli_fname ? info.dli_fname : "?");
    exit(0);
  }
  if (argc == 2 && strcmp(argv[1], "tiny") == 0) return 24;
  if (argc == 2 && strcmp(argv[1], "page") == 0) return 4096;
  if (argc == 2 && strcmp(argv[1], "large") == 0) return (size_t)1 << 20;
  fprintf(stderr, "usage: %s tiny|page|large|which\n", argv[0]);
  exit(2);
}

/* Calls the compiler cannot reason about. */
static void (*volatile at_free)(void*) = free;
static void* (*volatile at_malloc)(size_t) = malloc;
static void* (*volatile at_realloc)(void*, size_t) = realloc;
static void* (*volatile at_memset)(void*, int, size_t) = memset;

/* Some ordinary heap use after the misuse: what a program does next, and where many
 * allocators' checks run (on the next malloc or free of that size). */
static inline void at_carry_on(size_t n) {
  void* keep[32];
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 32; ++i) {
      keep[i] = at_malloc(n);
      if (keep[i] == NULL) {
        fprintf(stderr, "attack: out of memory\n");
        exit(4);
      }
      at_memset(keep[i], 0x5a, n < 64 ? n : 64);
    }
    for (int i = 31; i >= 0; --i) at_free(keep[i]);
  }
}

/* The misuse went unnoticed: the runner reads this line. */
static inline int at_completed(const char* kind, size_t n) {
  printf("attack %s %zu: completed\n", kind, n);
  return 0;
}

#endif
