/* Built against an installed Strata (find_package and pkg-config; shared and static): the
 * reap C API, <strata/reap.h>. Prints what failed and exits 1 if anything is off. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <strata/reap.h>

#define CHECK(cond)                                                 \
  do {                                                              \
    if (!(cond)) {                                                  \
      fprintf(stderr, "reap: check failed: %s (line %d)\n", #cond, __LINE__); \
      return 1;                                                     \
    }                                                               \
  } while (0)

static int cleanups;
static void count_cleanup(void *arg) { cleanups += *(int *)arg; }

int main(void) {
  strata_reap *r = reap_create(NULL);
  CHECK(r != NULL);
  strata_reap *child = reap_create(r);
  CHECK(child != NULL);
  char *a = reap_malloc(r, 100);
  CHECK(a != NULL && (uintptr_t)a % 16 == 0 && reap_size(r, a) >= 100);
  strcpy(a, "reap");
  int *z = reap_calloc(r, 50, sizeof(int));
  CHECK(z != NULL);
  for (int i = 0; i < 50; ++i) CHECK(z[i] == 0);
  a = reap_realloc(r, a, 5000);
  CHECK(a != NULL && strcmp(a, "reap") == 0 && reap_size(r, a) >= 5000);
  reap_free(r, z);
  CHECK(reap_malloc(child, 64) != NULL);
  int one = 1;
  CHECK(reap_cleanup_register(r, count_cleanup, &one) == 0);
  reap_clear(r); /* runs the cleanup, destroys the child, frees a */
  CHECK(cleanups == 1);
  char *b = reap_malloc(r, 32);
  CHECK(b != NULL);
  reap_destroy(r);
  CHECK(cleanups == 1);

  void *paper = NULL;
  reapCreate(&paper, NULL);
  CHECK(paper != NULL);
  void *p = reapMalloc(&paper, 24);
  CHECK(p != NULL);
  reapFree(&paper, p);
  reapFreeAll(&paper);
  reapDestroy(&paper);
  CHECK(paper == NULL);
  puts("reap C API: ok");
  return 0;
}
