/* A known allocation sequence for the heaptrack import tests (heaptrack_test.cpp checks a
   checked-in recording of it event for event, heaptrack_cli_test.cpp a fresh one): three
   objects of one size from one call site, a buffer grown by realloc, a calloc and an
   aligned_alloc, freed in a known order, one object left live. make_node and resize_buffer
   are noinline so that each is a frame of its own in heaptrack's call stacks. */
#include <stdlib.h>

__attribute__((noinline)) void* make_node(size_t size) { return malloc(size); }
__attribute__((noinline)) void* resize_buffer(void* old, size_t size) { return realloc(old, size); }

int main(void) {
  void* nodes[3];
  for (int i = 0; i < 3; ++i) nodes[i] = make_node(48); /* one call stack: one allocation info */
  void* buffer = resize_buffer(NULL, 1000);              /* realloc(NULL, n): an allocation */
  buffer = resize_buffer(buffer, 3000);                  /* heaptrack: a free, then an allocation */
  void* zeroed = calloc(10, 20);
  void* aligned = aligned_alloc(64, 640);
  free(nodes[1]); /* heaptrack names the allocation info, not the object */
  free(zeroed);
  free(aligned);
  free(buffer);
  free(nodes[0]);
  return nodes[2] == NULL; /* nodes[2] is live at the end */
}
