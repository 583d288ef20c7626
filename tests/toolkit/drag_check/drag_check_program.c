/* The situations of the reaps paper's drag measurements (section 7.3), each small enough for
 * its answer to be worked out by hand (drag_check_test.cpp has the arithmetic). Every object
 * is written when it is made and read at the points the comments name; nothing else
 * allocates (no stdio). Allocation time counts the bytes requested so far.
 *
 *   drag_check_program prompt      a window of 4 objects of 64 B: each is used for the last time
 *                            right before it is freed, 3 allocations after it was made
 *   drag_check_program region      a region (region API) of 100 objects of 100 B, each used when
 *                            made and after the next allocation, destroyed at the end
 *   drag_check_program phases      a long-lived reap cleared after each of 5 phases of 20 objects
 *                            of 50 B, each used when made and after the next allocation
 *   drag_check_program reap        a reap used as a region: 40 objects of 128 B, each used when
 *                            made and after the next allocation; the even ones reap_free'd
 *                            right after that, the odd ones left to a reap_clear at the end
 *   drag_check_program crash       the region situation, then a crash (SIGSEGV) before the destroy
 *   drag_check_program none        allocates nothing
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define obstack_chunk_alloc malloc
#define obstack_chunk_free free
#include "strata/obstack.h"
#include "strata/reap.h"
#include "strata/region.h"

static void use(void *p) { ((volatile unsigned char *)p)[0] += 1; }

static void prompt(void) {
  enum { N = 100, K = 4, SIZE = 64 };
  static void *objs[N];
  for (int i = 0; i < N; ++i) {
    objs[i] = malloc(SIZE);
    memset(objs[i], i, SIZE);
    if (i >= K - 1) {
      use(objs[i - (K - 1)]);
      free(objs[i - (K - 1)]);
    }
  }
  for (int j = N - (K - 1); j < N; ++j) {
    use(objs[j]);
    free(objs[j]);
  }
}

static void region(int crash) {
  enum { N = 100, SIZE = 100 };
  strata_region *r = region_create(NULL);
  void *prev = NULL;
  for (int i = 0; i < N; ++i) {
    void *p = region_alloc(r, SIZE);
    memset(p, i, SIZE);
    if (prev != NULL) use(prev); /* the previous object's last use */
    prev = p;
  }
  if (crash) raise(SIGSEGV);
  region_destroy(r);
}

static void phases(void) {
  enum { PHASES = 5, M = 20, SIZE = 50 };
  strata_reap *r = reap_create(NULL);
  for (int p = 0; p < PHASES; ++p) {
    void *prev = NULL;
    for (int i = 0; i < M; ++i) {
      void *q = reap_malloc(r, SIZE);
      memset(q, i, SIZE);
      if (prev != NULL) use(prev);
      prev = q;
    }
    reap_clear(r);
  }
  reap_destroy(r);
}

static void reap(void) {
  enum { N = 40, SIZE = 128 };
  strata_reap *r = reap_create(NULL);
  void *prev = NULL;
  for (int i = 0; i < N; ++i) {
    void *q = reap_malloc(r, SIZE);
    memset(q, i, SIZE);
    if (prev != NULL) {
      use(prev);
      if ((i - 1) % 2 == 0) reap_free(r, prev);
    }
    prev = q;
  }
  reap_clear(r);
  reap_destroy(r);
}

static void obstack(void) {
  enum { GROUPS = 3, M = 10, SIZE = 100 };
  struct obstack os;
  obstack_init(&os);
  for (int g = 0; g < GROUPS; ++g) {
    void *first = NULL, *prev = NULL;
    for (int i = 0; i < M; ++i) {
      void *q = obstack_alloc(&os, SIZE);
      memset(q, i, SIZE);
      if (prev != NULL) use(prev);
      if (first == NULL) first = q;
      prev = q;
    }
    obstack_free(&os, first); /* the group, back past its first object */
  }
  obstack_free(&os, NULL);
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  const char *mode = argv[1];
  if (strcmp(mode, "prompt") == 0) {
    prompt();
  } else if (strcmp(mode, "region") == 0) {
    region(0);
  } else if (strcmp(mode, "phases") == 0) {
    phases();
  } else if (strcmp(mode, "reap") == 0) {
    reap();
  } else if (strcmp(mode, "obstack") == 0) {
    obstack();
  } else if (strcmp(mode, "crash") == 0) {
    region(1);
  } else if (strcmp(mode, "none") != 0) {
    return 2;
  }
  return 0;
}
