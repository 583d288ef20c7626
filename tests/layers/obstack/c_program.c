/* A plain C11 program written against the GNU obstack interface, built with only
 * <strata/obstack.h> and -lstrata_obstack: strings built a piece at a time, a word table,
 * freeing back to a mark, the documented lvalues (obstack_chunk_size, obstack_alignment_mask),
 * chunk functions with an extra argument (all chunks given back at the end), and an
 * out-of-memory handler that longjmps out. Prints "obstack ok" when every check holds. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <strata/obstack.h>

#define obstack_chunk_alloc malloc
#define obstack_chunk_free free

static int failures = 0;
#define CHECK(cond)                                                  \
  do {                                                               \
    if (!(cond)) {                                                   \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                    \
    }                                                                \
  } while (0)

/* Chunk functions with an extra argument: count the chunks outstanding, fail on demand. */
struct counter {
  long live;
  int fail;
};
static void *counted_alloc(void *arg, size_t n) {
  struct counter *c = (struct counter *)arg;
  if (c->fail) return NULL;
  ++c->live;
  return malloc(n);
}
static void counted_free(void *arg, void *p) {
  --((struct counter *)arg)->live;
  free(p);
}

static jmp_buf out_of_memory;
static void on_failure(void) { longjmp(out_of_memory, 1); }

static char *join_words(struct obstack *ob, const char *const *words, int n) {
  int i;
  for (i = 0; i < n; ++i) {
    if (i != 0) obstack_1grow(ob, ' ');
    obstack_grow(ob, words[i], strlen(words[i]));
  }
  obstack_1grow(ob, '\0');
  return (char *)obstack_finish(ob);
}

int main(void) {
  static const char *const words[] = {"an", "obstack", "is", "a", "stack", "of", "objects"};
  struct obstack ob;
  char *mark, *s, *t, *big;
  int *ints;
  int i;
  struct counter counter = {0, 0};

  CHECK(obstack_init(&ob) == 1);
  CHECK(obstack_empty_p(&ob));
  CHECK(obstack_alignment_mask(&ob) == 15);
  CHECK(obstack_chunk_size(&ob) > 0);
  s = join_words(&ob, words, 7);
  CHECK(strcmp(s, "an obstack is a stack of objects") == 0);
  CHECK(((size_t)s & 15) == 0);
  mark = (char *)obstack_copy0(&ob, "mark", 4);
  CHECK(strcmp(mark, "mark") == 0);

  /* Many strings, spilling into new chunks; then back to the mark. */
  for (i = 0; i < 2000; ++i) {
    t = (char *)obstack_alloc(&ob, 17);
    memset(t, 'a' + i % 26, 17);
  }
  CHECK(obstack_memory_used(&ob) > 2000 * 17);
  obstack_free(&ob, mark);
  CHECK(obstack_object_size(&ob) == 0);
  CHECK(obstack_base(&ob) == mark);
  CHECK(strcmp(s, "an obstack is a stack of objects") == 0);

  /* Growing an int array, reading it back; one big object moved across chunks. */
  for (i = 0; i < 1000; ++i) obstack_int_grow(&ob, i * i);
  CHECK(obstack_object_size(&ob) == 1000 * sizeof(int));
  ints = (int *)obstack_finish(&ob);
  for (i = 0; i < 1000; ++i) CHECK(ints[i] == i * i);
  for (i = 0; i < 100000; ++i) obstack_1grow(&ob, (char)('0' + i % 10));
  obstack_blank(&ob, -1);
  CHECK(obstack_object_size(&ob) == 99999);
  obstack_make_room(&ob, 10);
  CHECK(obstack_room(&ob) >= 10);
  obstack_1grow_fast(&ob, 'x');
  big = (char *)obstack_finish(&ob);
  CHECK(big[0] == '0' && big[99998] == '8' && big[99999] == 'x');

  /* Packed strings with the alignment mask set to 0. */
  obstack_alignment_mask(&ob) = 0;
  s = (char *)obstack_copy(&ob, "abc", 3);
  t = (char *)obstack_copy(&ob, "def", 3);
  CHECK(t == s + 3);
  obstack_free(&ob, NULL);

  /* Chunk functions with an argument; every chunk comes back. */
  obstack_specify_allocation_with_arg(&ob, 512, 8, counted_alloc, counted_free, &counter);
  CHECK(obstack_chunk_size(&ob) == 512);
  CHECK(obstack_alignment_mask(&ob) == 7);
  for (i = 0; i < 300; ++i) obstack_alloc(&ob, 40);
  CHECK(counter.live > 10);

  /* Out of memory: the handler is called (and here longjmps out). */
  obstack_alloc_failed_handler = on_failure;
  counter.fail = 1;
  if (setjmp(out_of_memory) == 0) {
    obstack_alloc(&ob, 100000);
    CHECK(!"obstack_alloc should have called the failure handler");
  }
  counter.fail = 0;
  obstack_free(&ob, NULL);
  CHECK(counter.live == 0);

  if (failures != 0) return 1;
  puts("obstack ok");
  return 0;
}
