/* dropin_thread_churn [WAVES] [THREADS]: threads created and destroyed while allocating.
 * WAVES waves (default 1500) of THREADS threads (default 8); main starts a wave, joins it,
 * then starts the next. Each thread first checks and frees the objects handed to it by the
 * thread of the same index in the previous wave (so they are freed by another thread than
 * the one that allocated them, after that thread has exited), then makes 600 objects of
 * 16 B..8 KiB (log-uniform; one in 32 up to 64 KiB) in a working set of 48, each replacing
 * a random one; at its end it hands a random quarter of its live objects to the next wave
 * and frees the rest. Models programs that run each task on a fresh short-lived thread:
 * per-thread caches created and torn down constantly, memory freed by threads that did not
 * allocate it, heaps of dead threads to be reclaimed. */
#include "dropin_common.h"

#include <pthread.h>

#define ALLOCS 600
#define WORKING 48

/* An object in hand: pointer, size, id (id 0: empty). */
typedef struct {
  void* p;
  size_t size;
  uint64_t id;
} Obj;

/* A thread's handover to its successor: an array the thread allocates and the successor
 * frees. */
typedef struct {
  Obj* obj;
  size_t n;
} Handover;

/* What a thread is given and what it leaves: its wave and index, its inbox and outbox, and
 * the checksum of the objects it freed. */
typedef struct {
  long wave;
  int index;
  Handover in, out;
  uint64_t sum;
} Job;

/* Checks and frees an object; returns its checksum term. */
static uint64_t drop(Obj* o) {
  const uint64_t id = di_verify(o->p, o->size, o->id);
  free(o->p);
  o->p = NULL;
  return di_hash(id ^ o->size << 40);
}

/* A new object: 16 B..8 KiB, one in 32 up to 64 KiB, filled with its id's pattern. */
static Obj make(uint64_t* rng, uint64_t id) {
  const int big = (splitmix_next(rng) & 31) == 0;
  Obj o = {NULL, di_log_uniform(rng, 16, big ? 65536 : 8192), id};
  o.p = di_check(malloc(o.size), "object");
  di_fill(o.p, o.size, o.id);
  return o;
}

static void* run(void* arg) {
  Job* job = arg;
  uint64_t rng = (uint64_t)job->wave << 20 ^ (uint64_t)job->index * 0x9e3779b97f4a7c15ull;
  uint64_t sum = 0;
  for (size_t i = 0; i < job->in.n; ++i) sum += drop(&job->in.obj[i]);
  free(job->in.obj);
  Obj set[WORKING] = {{0}};
  const uint64_t base = ((uint64_t)job->wave * 256 + (uint64_t)job->index) << 16;
  for (uint64_t k = 1; k <= ALLOCS; ++k) {
    Obj* o = &set[splitmix_range(&rng, 0, WORKING - 1)];
    if (o->p) sum += drop(o);
    *o = make(&rng, base | k);
  }
  job->out.obj = di_check(malloc(WORKING / 4 * sizeof(Obj)), "handover");
  job->out.n = 0;
  for (int i = 0; i < WORKING; ++i) {
    if (set[i].p == NULL) continue;
    if (job->out.n < WORKING / 4 && (splitmix_next(&rng) & 3) == 0) job->out.obj[job->out.n++] = set[i];
    else sum += drop(&set[i]);
  }
  job->sum = sum;
  return NULL;
}

int main(int argc, char** argv) {
  const char* usage = "[WAVES] [THREADS]";
  const long waves = di_arg(argc, argv, 1, 1500, usage);
  const int threads = (int)di_arg(argc, argv, 2, 8, usage);
  if (threads > 256) di_fail("at most 256 threads", (uint64_t)threads);
  Job* job = di_check(calloc((size_t)threads, sizeof *job), "jobs");
  pthread_t* tid = di_check(calloc((size_t)threads, sizeof *tid), "threads");
  uint64_t sum = 0, handed = 0;
  for (long w = 0; w < waves; ++w) {
    for (int t = 0; t < threads; ++t) {
      job[t].wave = w;
      job[t].index = t;
      job[t].in = job[t].out;
      job[t].out = (Handover){NULL, 0};
      if (pthread_create(&tid[t], NULL, run, &job[t]) != 0) di_fail("pthread_create", (uint64_t)w);
    }
    for (int t = 0; t < threads; ++t) {
      pthread_join(tid[t], NULL);
      sum += job[t].sum;
      handed += job[t].out.n;
    }
  }
  for (int t = 0; t < threads; ++t) { /* the last wave's handover */
    for (size_t i = 0; i < job[t].out.n; ++i) sum += drop(&job[t].out.obj[i]);
    free(job[t].out.obj);
  }
  free(job);
  free(tid);
  printf("thread_churn waves=%ld threads=%d handed=%llu checksum=%016llx\n", waves, threads,
         (unsigned long long)handed, (unsigned long long)sum);
  di_report_malloc();
  return 0;
}
