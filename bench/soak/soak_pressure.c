/* malloc_soak's --pressure mode (soak.c describes it): the address-space limit the program
 * runs under, and after the mix whether the heap works again, under the limit and with it
 * lifted. */
#define _GNU_SOURCE
#include "soak.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define REFILL_MIB 48

/* The limit is set, then the program runs itself again under it, so that the allocator
 * meets the limit from its first request, as in a program started under `ulimit -v` (an
 * allocator that reserved its address space before the limit would never feel it). The
 * limit may lie below what the first image has mapped: only new mappings count. */
int soak_run_under_limit(char** argv, long limit_mib) {
  struct rlimit limit;
  getrlimit(RLIMIT_AS, &limit);
  limit.rlim_cur = (rlim_t)limit_mib << 20;
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_cur > limit.rlim_max)
    limit.rlim_cur = limit.rlim_max;
  if (setrlimit(RLIMIT_AS, &limit) != 0 || setenv("SOAK_UNDER_LIMIT", "1", 1) != 0) {
    fprintf(stderr, "%s: cannot set RLIMIT_AS: %s\n", argv[0], strerror(errno));
    return 2;
  }
  execv("/proc/self/exe", argv);
  fprintf(stderr, "%s: cannot run itself again: %s\n", argv[0], strerror(errno));
  return 2;
}

long soak_limit_mib(void) {
  struct rlimit limit;
  getrlimit(RLIMIT_AS, &limit);
  return (long)(limit.rlim_cur >> 20);
}

/* Allocates REFILL_MIB MiB of objects from the mix (each checked), then frees them: returns
 * non-NULL if every allocation succeeded. Run on a thread of its own, as a new thread of a
 * program that freed everything would; soak_pressure says whether a refusal is a failure. */
static void* refill(void* unused) {
  (void)unused;
  size_t want = (size_t)REFILL_MIB << 20, got = 0, count = 0, cap = 1 << 16;
  static struct soak_obj objs[1 << 16];
  uint64_t rng = 77;
  int ok = 1;
  for (; ok && got < want && count < cap; ++count) {
    if (!soak_alloc(&objs[count], &rng)) ok = 0;
    else got += objs[count].n;
  }
  for (size_t i = 0; i < count; ++i)
    if (objs[i].p != NULL) soak_release(&objs[i], &rng, "refilling the heap");
  return ok && got >= want ? (void*)1 : NULL;
}

static int refill_on_a_thread(void) {
  pthread_t t;
  void* ok = NULL;
  if (pthread_create(&t, NULL, refill, NULL) != 0) return 0;
  pthread_join(t, &ok);
  return ok != NULL;
}

int soak_check_recovery(long limit_mib, long enomem_small, const char** recovered) {
  int ok = 1;
  soak_pressure = 2;  /* refusals still allowed under the limit, but no huge requests */
  int under_limit = refill_on_a_thread();
  struct rlimit limit;
  getrlimit(RLIMIT_AS, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_AS, &limit);
  soak_pressure = 0;  /* with the limit lifted a refusal is a failure */
  long errors_before = atomic_load(&soak_errors);
  int lifted = refill_on_a_thread() && atomic_load(&soak_errors) == errors_before;
  *recovered = under_limit ? "yes" : lifted ? "after-lifting-limit" : "no";
  if (!lifted) {
    fprintf(stderr, "FAIL the heap did not give %d MiB again with the limit lifted\n",
            REFILL_MIB);
    ok = 0;
  }
  if (enomem_small == 0) {
    fprintf(stderr, "FAIL no request of at most 4 MiB was refused: --limit-mib %ld is too "
                    "generous to test anything\n", limit_mib);
    ok = 0;
  }
  return ok;
}
