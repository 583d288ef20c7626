/* fidelity_handoff [MESSAGES]: a pipeline. Two producer threads allocate MESSAGES (default
 * 1,000,000) messages of mixed sizes (mostly 32 B - 1 KiB, some up to 16 KiB, a few of
 * 128 KiB) and pass them through a bounded queue to two consumer threads, which check and
 * free them: every block is freed by a thread other than the one that allocated it. */
#include <pthread.h>
#include <string.h>

#include "fidelity_common.h"

enum { kProducers = 2, kConsumers = 2, kQueue = 1024 };

struct message {
  uint64_t id;
  size_t size;
  unsigned char body[];
};

static struct {
  pthread_mutex_t lock;
  pthread_cond_t not_full, not_empty;
  struct message* slots[kQueue];
  size_t head, tail, count;
  int producers_left;
} queue = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
           {0}, 0, 0, 0, kProducers};

static long per_producer;
static uint64_t sums[kConsumers];

static size_t message_size(uint64_t* rng) {
  const uint64_t r = splitmix_next(rng) % 1000;
  if (r < 900) return (size_t)splitmix_range(rng, 32, 1024);
  if (r < 998) return (size_t)splitmix_range(rng, 1024, 16384);
  return 128 * 1024;
}

static void* producer(void* arg) {
  const uint64_t index = (uint64_t)(uintptr_t)arg;
  uint64_t rng = 1000 + index;
  for (long i = 0; i < per_producer; ++i) {
    const size_t size = message_size(&rng);
    struct message* m = fid_check(malloc(sizeof *m + size), "message");
    m->id = index * (uint64_t)per_producer + (uint64_t)i;
    m->size = size;
    memset(m->body, (int)(m->id & 0xff), size);
    pthread_mutex_lock(&queue.lock);
    while (queue.count == kQueue) pthread_cond_wait(&queue.not_full, &queue.lock);
    queue.slots[queue.tail] = m;
    queue.tail = (queue.tail + 1) % kQueue;
    ++queue.count;
    pthread_cond_signal(&queue.not_empty);
    pthread_mutex_unlock(&queue.lock);
  }
  pthread_mutex_lock(&queue.lock);
  --queue.producers_left;
  pthread_cond_broadcast(&queue.not_empty);
  pthread_mutex_unlock(&queue.lock);
  return NULL;
}

static void* consumer(void* arg) {
  const size_t index = (size_t)(uintptr_t)arg;
  uint64_t sum = 0;
  for (;;) {
    pthread_mutex_lock(&queue.lock);
    while (queue.count == 0 && queue.producers_left > 0)
      pthread_cond_wait(&queue.not_empty, &queue.lock);
    if (queue.count == 0) {
      pthread_mutex_unlock(&queue.lock);
      break;
    }
    struct message* m = queue.slots[queue.head];
    queue.head = (queue.head + 1) % kQueue;
    --queue.count;
    pthread_cond_signal(&queue.not_full);
    pthread_mutex_unlock(&queue.lock);
    /* Order-free: which consumer gets which message does not change the total. */
    sum += fid_mix(fid_mix_u64(0, m->id), m->body, m->size < 64 ? m->size : 64) ^ m->size;
    free(m);
  }
  sums[index] = sum;
  return NULL;
}

int main(int argc, char** argv) {
  const long messages = fid_size_arg(argc, argv, 1000000, "MESSAGES");
  per_producer = messages / kProducers;
  pthread_t p[kProducers], c[kConsumers];
  for (int i = 0; i < kConsumers; ++i)
    if (pthread_create(&c[i], NULL, consumer, (void*)(uintptr_t)i) != 0) return 1;
  for (int i = 0; i < kProducers; ++i)
    if (pthread_create(&p[i], NULL, producer, (void*)(uintptr_t)i) != 0) return 1;
  for (int i = 0; i < kProducers; ++i) pthread_join(p[i], NULL);
  for (int i = 0; i < kConsumers; ++i) pthread_join(c[i], NULL);
  uint64_t sum = 0;
  for (int i = 0; i < kConsumers; ++i) sum += sums[i];
  printf("handoff messages=%ld checksum=%016llx\n", per_producer * kProducers,
         (unsigned long long)sum);
  return 0;
}
