/* dropin_larson [OPS] [THREADS]: a larson-style server. THREADS threads (default 4) share
 * an array of 8192 slots; each step a thread picks a random slot, allocates a new object
 * (24..1024 B, one in 16 up to 8 KiB), swaps it into the slot (atomic exchange) and checks
 * and frees the object it replaced, whichever thread allocated it. Each thread does 20,000
 * steps and then starts its successor and exits, as larson's threads are replaced each
 * round. OPS is the total number of steps. Models servers whose connection threads free
 * each other's objects. */
#include "dropin_common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#define SLOTS 8192
#define LIFETIME 20000

/* An object's header: its id and size, so whoever frees it can check it. */
typedef struct {
  uint64_t id;
  uint64_t size;
} Header;

static _Atomic(Header*) slot[SLOTS];
static long per_thread_total;
static int nthreads;
static atomic_int finished;
static _Atomic uint64_t total_sum;

/* The pattern byte of object `id`. */
static unsigned char pattern(uint64_t id) { return (unsigned char)((id * 131 + 7) & 0xff); }

/* Checks an object against its header (pattern bytes after it: first, middle, last) and
 * frees it; dies if it was corrupted. */
static void retire(Header* h) {
  if (h == NULL) return;
  const unsigned char* c = (const unsigned char*)h;
  const unsigned char b = pattern(h->id);
  const size_t n = h->size;
  if (n < 24 || n > 8192 || c[16] != b || c[16 + (n - 16) / 2] != b || c[n - 1] != b)
    di_fail("object contents changed before free", h->id);
  free(h);
}

/* Allocates object `id` of `size` bytes (>= 24): the header, then its pattern byte. */
static Header* make(uint64_t id, size_t size) {
  Header* h = di_check(malloc(size), "object");
  h->id = id;
  h->size = size;
  memset((char*)h + 16, pattern(id), size - 16);
  return h;
}

/* A thread's state: which worker chain, how far along it is. */
typedef struct {
  long chain;
  long done;
} Worker;

static void* worker(void* arg);

/* Starts a detached thread continuing chain w. */
static void start(Worker* w) {
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&t, &attr, worker, w) != 0) di_fail("pthread_create", (uint64_t)w->chain);
  pthread_attr_destroy(&attr);
}

/* One thread's life: LIFETIME steps of replace-a-random-slot, then a successor. */
static void* worker(void* arg) {
  Worker* w = arg;
  uint64_t rng = ((uint64_t)w->chain << 32) ^ (uint64_t)w->done, sum = 0;
  const long end = w->done + LIFETIME < per_thread_total ? w->done + LIFETIME : per_thread_total;
  for (; w->done < end; ++w->done) {
    const uint64_t r = splitmix_next(&rng);
    const size_t size = (r & 15) == 0 ? splitmix_range(&rng, 1025, 8192) : splitmix_range(&rng, 24, 1024);
    const uint64_t id = ((uint64_t)w->chain << 40) | (uint64_t)w->done;
    Header* h = make(id, size);
    sum += di_hash(id);
    retire(atomic_exchange(&slot[r >> 51 & (SLOTS - 1)], h));
  }
  atomic_fetch_add(&total_sum, sum);
  if (w->done < per_thread_total) start(w);
  else atomic_fetch_add(&finished, 1);
  return NULL;
}

/* Starts the thread chains, waits for them, frees what is left in the slots. */
int main(int argc, char** argv) {
  const long ops = di_arg(argc, argv, 1, 15000000, "[OPS] [THREADS]");
  nthreads = (int)di_arg(argc, argv, 2, 4, "[OPS] [THREADS]");
  per_thread_total = ops / nthreads;
  Worker* w = di_check(calloc((size_t)nthreads, sizeof *w), "workers");
  for (int i = 0; i < nthreads; ++i) {
    w[i].chain = i;
    start(&w[i]);
  }
  while (atomic_load(&finished) < nthreads) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  for (int i = 0; i < SLOTS; ++i) retire(atomic_exchange(&slot[i], NULL));
  printf("larson ops=%ld threads=%d checksum=%016llx\n", per_thread_total * nthreads, nthreads,
         (unsigned long long)atomic_load(&total_sum));
  di_report_malloc();
  free(w);
  return 0;
}
