/* A C11 program that uses only <strata/region.h>: builds a tree of regions (a server with a
 * region per connection and per request), fills them with strings and zeroed arrays, checks
 * every object's contents and the counts, clears and destroys, and checks bad input.
 * Exit status 0 on success; each failed check prints its line and makes the status 1. */
#include <strata/region.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                     \
    }                                                                 \
  } while (0)

enum { kConnections = 8, kRequests = 50, kStrings = 20 };

/* One request: its own child region, strings and a zeroed table, all checked, then gone. */
static void serve(strata_region *connection, int c, int q) {
  strata_region *request = region_create(connection);
  CHECK(request != NULL);
  if (!request) return;
  char *lines[kStrings];
  char buf[64];
  size_t bytes = 0;
  for (int i = 0; i < kStrings; ++i) {
    snprintf(buf, sizeof buf, "conn %d request %d line %d", c, q, i);
    lines[i] = region_strdup(request, buf);
    CHECK(lines[i] != NULL);
    bytes += strlen(buf) + 1;
  }
  int *table = region_calloc(request, 100, sizeof(int));
  CHECK(table != NULL);
  if (table) {
    for (int i = 0; i < 100; ++i) CHECK(table[i] == 0);
    for (int i = 0; i < 100; ++i) table[i] = i * c + q;
  }
  bytes += 100 * sizeof(int);
  CHECK(region_object_count(request) == kStrings + 1);
  CHECK(region_live_bytes(request) == bytes);
  for (int i = 0; i < kStrings; ++i) {
    snprintf(buf, sizeof buf, "conn %d request %d line %d", c, q, i);
    CHECK(lines[i] && strcmp(lines[i], buf) == 0);
  }
  if (table)
    for (int i = 0; i < 100; ++i) CHECK(table[i] == i * c + q);
  if (q % 2 == 0) region_destroy(request); /* odd requests go with their connection */
}

int main(void) {
  strata_region *server = region_create(NULL);
  CHECK(server != NULL);
  if (!server) return 1;
  char *name = region_strdup(server, "strata region emulator");

  for (int c = 0; c < kConnections; ++c) {
    strata_region *connection = region_create(server);
    CHECK(connection != NULL);
    if (!connection) continue;
    char *peer = region_alloc(connection, 32);
    CHECK(peer != NULL);
    if (peer) snprintf(peer, 32, "peer-%d", c);
    for (int q = 0; q < kRequests; ++q) serve(connection, c, q);
    CHECK(peer && strncmp(peer, "peer-", 5) == 0);
    CHECK(region_object_count(connection) == 1);
    if (c % 2 == 0) region_destroy(connection); /* the rest go with the server */
  }

  /* Bad input: NULL + ENOMEM, nothing recorded, the region still valid. */
  errno = 0;
  CHECK(region_alloc(server, SIZE_MAX) == NULL && errno == ENOMEM);
  errno = 0;
  CHECK(region_calloc(server, SIZE_MAX / 2, 4) == NULL && errno == ENOMEM);
  CHECK(region_object_count(server) == 1);
  CHECK(name && strcmp(name, "strata region emulator") == 0);
  region_destroy(NULL);

  region_clear(server); /* frees the name and destroys the remaining connections */
  CHECK(region_object_count(server) == 0 && region_live_bytes(server) == 0);
  CHECK(region_alloc(server, 0) != NULL);
  region_destroy(server);

  if (failures == 0) printf("region C program: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
