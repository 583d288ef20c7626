/* fidelity_server [REQUESTS]: four worker threads serve REQUESTS (default 1,000,000)
 * requests between them. Each request allocates scratch memory (a few blocks of 64 B -
 * 8 KiB, freed at its end) and one result object (48 B - 4 KiB) that it stores in a random
 * slot of a shared table, freeing the object it displaces: objects die on whichever thread
 * happens to replace them. */
#include <pthread.h>
#include <string.h>

#include "fidelity_common.h"

enum { kWorkers = 4, kSlots = 32768, kStripes = 64 };

static void* slots[kSlots];
static pthread_mutex_t stripes[kStripes];
static long per_worker;
static uint64_t sums[kWorkers];

static void* worker(void* arg) {
  const uint64_t index = (uint64_t)(uintptr_t)arg;
  uint64_t rng = 5000 + index, sum = 0;
  for (long r = 0; r < per_worker; ++r) {
    /* Scratch: a few buffers that live for this request only. */
    unsigned char* scratch[6];
    const int n = (int)splitmix_range(&rng, 2, 6);
    for (int k = 0; k < n; ++k) {
      const size_t size = (size_t)splitmix_range(&rng, 64, 8192);
      scratch[k] = fid_check(malloc(size), "scratch");
      memset(scratch[k], k + 1, size);
      sum += scratch[k][size - 1];
    }
    /* The result, which outlives the request. */
    const size_t size = (size_t)splitmix_range(&rng, 48, 4096);
    unsigned char* obj = fid_check(malloc(size), "object");
    memset(obj, (int)(r & 0xff), size);
    sum += fid_mix_u64(index, (uint64_t)r) ^ size;
    for (int k = 0; k < n; ++k) free(scratch[k]);
    const size_t slot = (size_t)(splitmix_next(&rng) % kSlots);
    pthread_mutex_t* lock = &stripes[slot % kStripes];
    pthread_mutex_lock(lock);
    void* old = slots[slot];
    slots[slot] = obj;
    pthread_mutex_unlock(lock);
    free(old);
  }
  sums[index] = sum;
  return NULL;
}

int main(int argc, char** argv) {
  const long requests = fid_size_arg(argc, argv, 1000000, "REQUESTS");
  per_worker = requests / kWorkers;
  for (int i = 0; i < kStripes; ++i) pthread_mutex_init(&stripes[i], NULL);
  pthread_t t[kWorkers];
  for (int i = 0; i < kWorkers; ++i)
    if (pthread_create(&t[i], NULL, worker, (void*)(uintptr_t)i) != 0) return 1;
  for (int i = 0; i < kWorkers; ++i) pthread_join(t[i], NULL);
  uint64_t sum = 0;
  for (int i = 0; i < kWorkers; ++i) sum += sums[i];
  /* Which objects the table holds at the end depends on the interleaving, so they are
   * freed but not part of the checksum. */
  for (int i = 0; i < kSlots; ++i) free(slots[i]);
  printf("server requests=%ld checksum=%016llx\n", per_worker * kWorkers,
         (unsigned long long)sum);
  return 0;
}
