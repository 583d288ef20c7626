/* Built against an installed Strata (find_package and pkg-config; shared and static): the GNU
 * obstack C API, <strata/obstack.h>. Prints what failed and exits 1 if anything is off. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <strata/obstack.h>

#define obstack_chunk_alloc malloc
#define obstack_chunk_free free

#define CHECK(cond)                                                    \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "obstack: check failed: %s (line %d)\n", #cond, __LINE__); \
      return 1;                                                        \
    }                                                                  \
  } while (0)

int main(void) {
  struct obstack ob;
  CHECK(obstack_init(&ob) == 1);
  CHECK(obstack_empty_p(&ob));
  char *first = obstack_copy0(&ob, "obstack", 7);
  CHECK(first != NULL && strcmp(first, "obstack") == 0);
  obstack_grow(&ob, "grown ", 6);
  for (int i = 0; i < 3; ++i) obstack_1grow(&ob, 'a' + i);
  obstack_1grow(&ob, '\0');
  CHECK(obstack_object_size(&ob) == 10);
  char *grown = obstack_finish(&ob);
  CHECK(strcmp(grown, "grown abc") == 0);
  char *big = obstack_alloc(&ob, 100000); /* bigger than a chunk */
  CHECK(big != NULL);
  memset(big, 1, 100000);
  CHECK(strcmp(first, "obstack") == 0 && strcmp(grown, "grown abc") == 0);
  obstack_free(&ob, grown); /* frees grown and big, keeps first */
  CHECK(strcmp(first, "obstack") == 0);
  obstack_free(&ob, NULL); /* frees everything */
  puts("obstack C API: ok");
  return 0;
}
