/* dropin_web_proxy [STEPS] [MIB]: a web proxy's cache run live, the shape of the bundled
 * `strata generate web-proxy` workload (toolkit/tracetools/workloads.cpp). A cache of
 * objects is filled to MIB MiB (default 48), which fixes how many objects it holds; each of
 * STEPS steps (default 400000) is a request: a buffer of 512 B..8 KiB and 3..8 header strings
 * of 16..256 B, a response buffer of 4..16 KiB on a miss (one request in 4), then one cache
 * object, chosen at random, freed and replaced by a new one of a fresh size; the request's
 * own memory is freed at its end, last first. Object sizes are heavy-tailed as the
 * generator's: 55% 200 B..2 KiB, 35% 2..64 KiB log-uniform, 10% a Pareto tail (alpha 1.2)
 * from 64 KiB, capped at 1 MiB (or MIB/8). Every byte of every object is written. Prints
 * the most live bytes held (live_peak_kib), to be read against the peak RSS: what the
 * allocator loses to fragmentation when live memory is fixed but sizes keep changing. */
#include "dropin_common.h"

#define MAX_SCRATCH 10

typedef struct {
  void* p;
  size_t size;
  uint64_t id;
} Obj;

static size_t max_object;
static uint64_t next_id = 1;
static size_t live, live_peak;

static double uniform(uint64_t* rng) { return (double)(splitmix_next(rng) >> 11) / 9007199254740992.0; }

/* A cache object's size, from the generator's model. */
static size_t object_size(uint64_t* rng) {
  const double r = uniform(rng);
  double s;
  if (r < 0.55) s = (double)splitmix_range(rng, 200, 2047);
  else if (r < 0.90) s = (double)di_log_uniform(rng, 2048, 65536);
  else s = 65536.0 / pow(1.0 - uniform(rng), 1.0 / 1.2);
  return s > (double)max_object ? max_object : (size_t)s;
}

static Obj make(size_t size) {
  Obj o = {di_check(malloc(size), "object"), size, next_id++};
  di_fill(o.p, size, o.id);
  live += size;
  if (live > live_peak) live_peak = live;
  return o;
}

/* Checks and frees an object; returns its checksum term. */
static uint64_t drop(Obj* o) {
  const uint64_t id = di_verify(o->p, o->size, o->id);
  free(o->p);
  live -= o->size;
  return di_hash(id ^ (uint64_t)o->size << 40);
}

/* One request: its buffers made, a cache object replaced, its buffers freed last first. */
static uint64_t request(uint64_t* rng, Obj* cache, size_t n) {
  Obj scratch[MAX_SCRATCH];
  int k = 0;
  scratch[k++] = make(di_log_uniform(rng, 512, 8192));
  for (int h = (int)splitmix_range(rng, 3, 8); h > 0; --h) scratch[k++] = make(splitmix_range(rng, 16, 256));
  if ((splitmix_next(rng) & 3) == 0) scratch[k++] = make(di_log_uniform(rng, 4096, 16384));
  Obj* victim = &cache[splitmix_range(rng, 0, n - 1)];
  uint64_t sum = drop(victim);
  *victim = make(object_size(rng));
  while (k > 0) sum += drop(&scratch[--k]);
  return sum;
}

int main(int argc, char** argv) {
  const char* usage = "[STEPS] [MIB]";
  const long steps = di_arg(argc, argv, 1, 400000, usage);
  const size_t capacity = (size_t)di_arg(argc, argv, 2, 48, usage) << 20;
  max_object = capacity / 8 < (1u << 20) ? capacity / 8 : (1u << 20);
  uint64_t rng = 8080, sum = 0;
  size_t n = 0, cap = 0;
  Obj* cache = NULL;
  for (;;) { /* warm-up: the cache fills to its capacity, which fixes its count */
    const size_t s = object_size(&rng);
    if (n > 0 && live + s > capacity) break;
    if (n == cap) {
      cap = cap ? cap * 2 : 256;
      cache = di_check(realloc(cache, cap * sizeof *cache), "cache");
    }
    cache[n++] = make(s);
  }
  for (long i = 0; i < steps; ++i) sum = sum * 31 + request(&rng, cache, n);
  const size_t live_end = live;
  for (size_t i = 0; i < n; ++i) sum += drop(&cache[i]);
  free(cache);
  printf("web_proxy steps=%ld objects=%zu live_end_kib=%zu live_peak_kib=%zu checksum=%016llx\n",
         steps, n, live_end >> 10, live_peak >> 10, (unsigned long long)sum);
  di_report_malloc();
  return 0;
}
