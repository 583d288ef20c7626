/* Built against an installed Strata (find_package and pkg-config; shared and static): the
 * region emulator's C API, <strata/region.h>. Prints what failed and exits 1 if anything is
 * off. */
#include <stdio.h>
#include <string.h>

#include <strata/region.h>

#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "region: check failed: %s (line %d)\n", #cond, __LINE__); \
      return 1;                                                       \
    }                                                                 \
  } while (0)

int main(void) {
  strata_region *r = region_create(NULL);
  CHECK(r != NULL);
  strata_region *child = region_create(r);
  CHECK(child != NULL);
  char *a = region_alloc(r, 100);
  CHECK(a != NULL);
  memset(a, 'x', 100);
  int *z = region_calloc(r, 10, sizeof(int));
  CHECK(z != NULL);
  for (int i = 0; i < 10; ++i) CHECK(z[i] == 0);
  char *s = region_strdup(r, "region");
  CHECK(s != NULL && strcmp(s, "region") == 0);
  CHECK(region_alloc(child, 8) != NULL);
  CHECK(region_object_count(r) == 3);
  CHECK(region_live_bytes(r) == 100 + 10 * sizeof(int) + 7);
  region_clear(r); /* frees a, z, s and destroys the child */
  CHECK(region_object_count(r) == 0 && region_live_bytes(r) == 0);
  CHECK(region_alloc(r, 16) != NULL && region_object_count(r) == 1);
  region_destroy(r);
  puts("region C API: ok");
  return 0;
}
