/* dropin_quiet_threads [MIB] [THREADS]: threads that free a lot and then go quiet. THREADS
 * threads (default 16) take turns, one at a time (a mutex and condition variable pass the
 * baton): each allocates MIB MiB (default 10) of 16..512 B objects, checks and frees them
 * all in a shuffled order, then waits, alive and not calling malloc, until every thread has
 * had its turn; all are joined at the end. An allocator that keeps freed memory in a
 * per-thread cache and returns it only when the thread allocates again or exits holds
 * THREADS x MIB at the end; one that reuses or returns it holds about MIB. Peak RSS is the
 * figure to read. */

#include "dropin_common.h"

#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static int turn;
static int nthreads;
static long bytes_per_thread;
static uint64_t sums[256];

/* Waits until the baton says `until` (turn >= until). */
static void wait_turn(int until) {
  pthread_mutex_lock(&lock);
  while (turn < until) pthread_cond_wait(&turn_changed, &lock);
  pthread_mutex_unlock(&lock);
}

/* Passes the baton on. */
static void pass_turn(void) {
  pthread_mutex_lock(&lock);
  ++turn;
  pthread_cond_broadcast(&turn_changed);
  pthread_mutex_unlock(&lock);
}

/* One thread's turn: allocate its share of small objects, then free them all shuffled. */
static uint64_t burst(long k) {
  uint64_t rng = 1000u + (uint64_t)k, sum = 0;
  size_t cap = (size_t)bytes_per_thread / 16 + 1, n = 0, total = 0;
  void** obj = di_check(malloc(cap * sizeof *obj), "object table");
  size_t* size = di_check(malloc(cap * sizeof *size), "size table");
  while (total < (size_t)bytes_per_thread) {
    size[n] = splitmix_range(&rng, 16, 512);
    obj[n] = di_check(malloc(size[n]), "object");
    di_fill(obj[n], size[n], ((uint64_t)k << 32) | n);
    total += size[n++];
  }
  for (size_t i = n; i > 1; --i) { /* Fisher-Yates, objects and sizes together */
    const size_t j = splitmix_next(&rng) % i;
    void* t = obj[i - 1]; obj[i - 1] = obj[j]; obj[j] = t;
    const size_t s = size[i - 1]; size[i - 1] = size[j]; size[j] = s;
  }
  for (size_t i = 0; i < n; ++i) {
    uint64_t id;
    memcpy(&id, obj[i], 8);
    sum += di_hash(di_verify(obj[i], size[i], id));
    free(obj[i]);
  }
  free(obj);
  free(size);
  return sum ^ n;
}

/* A thread: wait for its turn, do its burst, pass the baton, stay quiet until all are done. */
static void* worker(void* arg) {
  const long k = (long)arg;
  wait_turn((int)k);
  sums[k] = burst(k);
  pass_turn();
  wait_turn(nthreads);
  return NULL;
}

/* Starts the threads (the baton starts at thread 0) and joins them all at the end. */
int main(int argc, char** argv) {
  bytes_per_thread = di_arg(argc, argv, 1, 10, "[MIB] [THREADS]") << 20;
  nthreads = (int)di_arg(argc, argv, 2, 16, "[MIB] [THREADS]");
  if (nthreads > 256) nthreads = 256;
  pthread_t t[256];
  for (long k = 0; k < nthreads; ++k)
    if (pthread_create(&t[k], NULL, worker, (void*)k) != 0) di_fail("pthread_create", (uint64_t)k);
  uint64_t sum = 0;
  for (int k = 0; k < nthreads; ++k) {
    pthread_join(t[k], NULL);
    sum += sums[k];
  }
  printf("quiet_threads mib=%ld threads=%d checksum=%016llx\n", bytes_per_thread >> 20,
         nthreads, (unsigned long long)sum);
  di_report_malloc();
  return 0;
}
