/* dropin_large [STEPS]: large blocks, 64 KiB to 32 MiB. A pool of four live blocks churned
 * STEPS times (log-uniform sizes, every 4 KiB page written, checked before free), then
 * STEPS / 25 chains of realloc growth from 64 KiB by 1.5x up to 32 MiB, each new page
 * written and every page's stamp checked after each move. Models programs that handle big
 * buffers: the allocator's mmap threshold, reuse of freed large blocks, and mremap. */
#include "dropin_common.h"

#define PAGE 4096
#define POOL 4
#define MIN_BLOCK (64u << 10)
#define MAX_BLOCK (32u << 20)

/* The stamp of page `page` of block `id`. */
static uint64_t stamp(uint64_t id, size_t page) { return id * 1000003u + page; }

/* Writes the stamp of every page in [from, n) of block `id` (a page at every 4 KiB offset). */
static void touch(unsigned char* p, size_t from, size_t n, uint64_t id) {
  for (size_t off = from / PAGE * PAGE; off + 8 <= n; off += PAGE) {
    const uint64_t s = stamp(id, off / PAGE);
    memcpy(p + off, &s, 8);
  }
}

/* Checks every page stamp of block `id` below n; returns their sum for the checksum. */
static uint64_t check(const unsigned char* p, size_t n, uint64_t id) {
  uint64_t sum = 0;
  for (size_t off = 0; off + 8 <= n; off += PAGE) {
    uint64_t s;
    memcpy(&s, p + off, 8);
    if (s != stamp(id, off / PAGE)) di_fail("large block page changed", id);
    sum += s;
  }
  return sum;
}

/* The pool: each step replaces a random block by a new one of a random size. */
static uint64_t churn(long steps, uint64_t* rng) {
  unsigned char* block[POOL] = {0};
  size_t size[POOL] = {0};
  uint64_t ids[POOL] = {0}, sum = 0;
  for (long i = 0; i < steps + POOL; ++i) {
    const int k = i < POOL ? (int)i : (int)(splitmix_next(rng) % POOL);
    if (block[k] != NULL) {
      sum += check(block[k], size[k], ids[k]);
      free(block[k]);
    }
    if (i >= steps) { block[k] = NULL; continue; } /* the last POOL steps only free */
    size[k] = di_log_uniform(rng, MIN_BLOCK, MAX_BLOCK);
    ids[k] = (uint64_t)i + 1;
    block[k] = di_check(malloc(size[k]), "large block");
    touch(block[k], 0, size[k], ids[k]);
  }
  return sum;
}

/* One realloc chain: 64 KiB grown by 1.5x to 32 MiB, checked after every move. */
static uint64_t grow(uint64_t id) {
  size_t n = MIN_BLOCK;
  unsigned char* p = di_check(malloc(n), "growth start");
  touch(p, 0, n, id);
  uint64_t sum = 0;
  while (n < MAX_BLOCK) {
    size_t next = n + n / 2;
    if (next > MAX_BLOCK) next = MAX_BLOCK;
    p = di_check(realloc(p, next), "realloc growth");
    sum += check(p, n, id);
    touch(p, n, next, id);
    n = next;
  }
  sum += check(p, n, id);
  free(p);
  return sum;
}

/* The pool churn, then the realloc chains; prints the checksum of every page checked. */
int main(int argc, char** argv) {
  const long steps = di_arg(argc, argv, 1, 1500, "[STEPS]");
  uint64_t rng = 42;
  uint64_t sum = churn(steps, &rng);
  const long chains = steps / 25 > 0 ? steps / 25 : 1;
  for (long c = 0; c < chains; ++c) sum += grow(1000000u + (uint64_t)c);
  printf("large steps=%ld chains=%ld checksum=%016llx\n", steps, chains,
         (unsigned long long)sum);
  di_report_malloc();
  return 0;
}
