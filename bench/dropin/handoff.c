/* dropin_handoff [BATCHES] [THREADS]: threads handing objects to each other, with threads
 * created and destroyed throughout. THREADS worker slots in a ring; the worker of slot k
 * allocates a batch of 64 objects (16..512 B, one in 16 up to 4 KiB), sends it to slot k+1's
 * queue (mutex and condition variable), then takes one batch from its own queue, checks
 * and frees it: every object is freed by another thread than the one that allocated it.
 * A worker lives for 40 batches and then starts its successor and exits. BATCHES is the
 * total over all slots. Models message-passing servers and thread pools that are resized. */

#include "dropin_common.h"

#include <pthread.h>

#define BATCH 64
#define LIFETIME 40

/* One batch in a queue: the objects, their sizes and ids. */
typedef struct Batch {
  struct Batch* next;
  void* obj[BATCH];
  size_t size[BATCH];
  uint64_t id[BATCH];
} Batch;

/* A slot: its queue of received batches and how many batches its workers still have to do. */
typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t ready;
  Batch *head, *tail;
  long remaining;
  long done; /* batches sent so far by this slot, for the ids */
} Slot;

static Slot* slots;
static int nslots;
static pthread_mutex_t finish_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t finish_cond = PTHREAD_COND_INITIALIZER;
static int finished_slots;
static uint64_t total_sum; /* under finish_lock */

/* Appends a batch to a slot's queue and wakes its worker. */
static void push(Slot* s, Batch* b) {
  b->next = NULL;
  pthread_mutex_lock(&s->lock);
  if (s->tail) s->tail->next = b; else s->head = b;
  s->tail = b;
  pthread_cond_signal(&s->ready);
  pthread_mutex_unlock(&s->lock);
}

/* Takes the oldest batch of a slot's queue, waiting for one. */
static Batch* pop(Slot* s) {
  pthread_mutex_lock(&s->lock);
  while (s->head == NULL) pthread_cond_wait(&s->ready, &s->lock);
  Batch* b = s->head;
  s->head = b->next;
  if (s->head == NULL) s->tail = NULL;
  pthread_mutex_unlock(&s->lock);
  return b;
}

/* Allocates and fills batch number `seq` of slot k; sizes come from the batch's own seed. */
static Batch* make_batch(int k, long seq) {
  Batch* b = di_check(malloc(sizeof *b), "batch");
  uint64_t rng = ((uint64_t)k << 40) ^ (uint64_t)seq;
  for (int i = 0; i < BATCH; ++i) {
    const uint64_t r = splitmix_next(&rng);
    b->size[i] = (r & 15) == 0 ? splitmix_range(&rng, 513, 4096) : splitmix_range(&rng, 16, 512);
    b->id[i] = ((uint64_t)k << 48) | ((uint64_t)seq << 8) | (uint64_t)i;
    b->obj[i] = di_check(malloc(b->size[i]), "message");
    di_fill(b->obj[i], b->size[i], b->id[i]);
  }
  return b;
}

/* Checks and frees a received batch; returns its checksum (independent of timing). */
static uint64_t consume(Batch* b) {
  uint64_t sum = 0;
  for (int i = 0; i < BATCH; ++i) {
    sum += di_hash(di_verify(b->obj[i], b->size[i], b->id[i]));
    free(b->obj[i]);
  }
  free(b);
  return sum;
}

static void* worker(void* arg);

/* Starts a detached worker for slot k. */
static void start_worker(long k) {
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&t, &attr, worker, (void*)k) != 0) di_fail("pthread_create", (uint64_t)k);
  pthread_attr_destroy(&attr);
}

/* A worker's life: up to LIFETIME batches sent and received, then a successor (or, when the
 * slot is done, the count of finished slots raised). */
static void* worker(void* arg) {
  const long k = (long)arg;
  Slot* me = &slots[k];
  Slot* next = &slots[(k + 1) % nslots];
  uint64_t sum = 0;
  int life = 0;
  while (life < LIFETIME && me->remaining > 0) {
    push(next, make_batch((int)k, me->done++));
    sum += consume(pop(me));
    --me->remaining;
    ++life;
  }
  pthread_mutex_lock(&finish_lock);
  total_sum += sum;
  if (me->remaining == 0) finished_slots++;
  pthread_cond_signal(&finish_cond);
  pthread_mutex_unlock(&finish_lock);
  if (me->remaining > 0) start_worker(k);
  return NULL;
}

/* Starts a worker per slot and waits until every slot has done its batches. */
int main(int argc, char** argv) {
  const long batches = di_arg(argc, argv, 1, 150000, "[BATCHES] [THREADS]");
  nslots = (int)di_arg(argc, argv, 2, 2, "[BATCHES] [THREADS]");
  slots = di_check(calloc((size_t)nslots, sizeof *slots), "slots");
  for (int k = 0; k < nslots; ++k) {
    pthread_mutex_init(&slots[k].lock, NULL);
    pthread_cond_init(&slots[k].ready, NULL);
    slots[k].remaining = batches / nslots;
  }
  for (long k = 0; k < nslots; ++k) start_worker(k);
  pthread_mutex_lock(&finish_lock);
  while (finished_slots < nslots) pthread_cond_wait(&finish_cond, &finish_lock);
  const uint64_t sum = total_sum;
  pthread_mutex_unlock(&finish_lock);
  printf("handoff batches=%ld threads=%d checksum=%016llx\n", batches / nslots * nslots, nslots,
         (unsigned long long)sum);
  di_report_malloc();
  return 0;
}
