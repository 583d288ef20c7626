/* The program the browser tests record and run (tests.cmake): a few allocation sites, each its
 * own function so a recording with --sites tells them apart, in phases that make the live
 * bytes rise, hold, fall and rise again, so two moments of the memory chart list different
 * sites. Its one argument scales the nodes' and buffers' sizes, so two recordings with
 * different arguments differ in peak and per site (for `strata diff`). The buffers are never
 * used after they are filled, which `strata drag` reports as drag. A second argument pauses
 * that many milliseconds after each phase, so that live runs last long enough for their
 * resident size to be sampled over time (every 10 ms at first).
 *   report_program [SCALE [PAUSE_MS]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct node {
  struct node* next;
  char payload[];
};

static unsigned long checksum;

__attribute__((noinline)) static struct node* make_nodes(int count, size_t payload) {
  struct node* head = NULL;
  for (int i = 0; i < count; ++i) {
    struct node* n = malloc(sizeof *n + payload);
    if (n == NULL) exit(1);
    memset(n->payload, i & 0xff, payload);
    n->next = head;
    head = n;
  }
  return head;
}

__attribute__((noinline)) static void free_nodes(struct node* head) {
  while (head != NULL) {
    struct node* next = head->next;
    checksum += (unsigned char)head->payload[0];
    free(head);
    head = next;
  }
}

__attribute__((noinline)) static char** make_buffers(int count, size_t size) {
  char** buffers = calloc((size_t)count, sizeof *buffers);
  if (buffers == NULL) exit(1);
  for (int i = 0; i < count; ++i) {
    buffers[i] = malloc(size);
    if (buffers[i] == NULL) exit(1);
    memset(buffers[i], i & 0xff, size);
  }
  return buffers;
}

__attribute__((noinline)) static void churn(int rounds) {
  for (int i = 0; i < rounds; ++i) {
    char* scratch = malloc(24 + (size_t)(i % 200));
    if (scratch == NULL) exit(1);
    scratch[0] = (char)i;
    checksum += (unsigned char)scratch[0];
    free(scratch);
  }
}

__attribute__((noinline)) static char** fill_cache(int count, size_t size) {
  char** cache = malloc((size_t)count * sizeof *cache);
  if (cache == NULL) exit(1);
  for (int i = 0; i < count; ++i) {
    cache[i] = malloc(size + (size_t)(i % 64));
    if (cache[i] == NULL) exit(1);
    cache[i][0] = (char)i;
  }
  return cache;
}

static void pause_ms(int ms) {
  const struct timespec wait = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&wait, NULL);
}

int main(int argc, char** argv) {
  const int scale = argc > 1 ? atoi(argv[1]) : 1;
  const int pause = argc > 2 ? atoi(argv[2]) : 0;
  if (scale < 1 || scale > 64 || pause < 0 || pause > 1000) {
    fprintf(stderr, "usage: report_program [SCALE 1..64 [PAUSE_MS 0..1000]]\n");
    return 2;
  }
  struct node* nodes = make_nodes(3000, 48 * (size_t)scale);
  churn(6000);
  pause_ms(pause);
  char** buffers = make_buffers(150, 4096 * (size_t)scale);
  churn(6000);
  pause_ms(pause);
  free_nodes(nodes);
  churn(6000);
  pause_ms(pause);
  char** cache = fill_cache(1200, 200);
  churn(6000);
  pause_ms(pause);
  for (int i = 0; i < 150; ++i) free(buffers[i]);
  free(buffers);
  /* Half the cache is freed; the rest stays live to the end (never freed). */
  for (int i = 0; i < 1200; i += 2) free(cache[i]);
  printf("checksum %lu\n", checksum);
  return 0;
}
