/* malloc_soak: a long run of every allocation entry point at once, for the drop-in malloc
 * libraries under LD_PRELOAD (scripts/soak.sh runs it; not a test, nothing times it).
 *
 * For --seconds, 8 worker threads (--threads) visit random slots of a shared table: an empty
 * slot gets an object from a random entry point (soak_ops.c), a full one is checked against
 * its pattern and then freed, resized with realloc/reallocarray, or measured with
 * malloc_usable_size, so most frees happen on another thread than the allocation. Each
 * worker also keeps a few objects of its own, which it frees or leaves in the table when it
 * exits. Workers exit after a random number of operations and the main thread starts new
 * ones (thread churn: a worker lives for up to --churn-ops operations, 200000 by default;
 * 0 keeps the first workers for the whole run). Every --fork-ms (1000) the main thread
 * fork()s in the middle of it all: the child checks and frees objects it finds in the table,
 * allocates and frees a mix of its own (on a new thread too, every fourth time) and exits 0
 * if every check passed; a child still running after 30 s is taken for a lock held across
 * fork() and fails the run.
 *
 * Every second the main thread samples its RSS (/proc/self/statm) and the part of it that
 * is memory freed with MADV_FREE the kernel has not taken back yet (LazyFree in
 * /proc/self/smaps_rollup; it does so only when it runs short), and writes a line
 * "SECONDS RSS_KIB LAZYFREE_KIB VM_KIB OPS" to --rss FILE (default: none). "In use" below is
 * RSS - LazyFree. At the end it prints the calls made per entry point and a result line. The
 * run fails (exit 1) on any pattern mismatch, unexpected NULL, child failure, or if the peak
 * in use of the last tenth of the run exceeds 1.5 x the peak of the first tenth + 64 MiB: a
 * steady mix plateaus once the table is full and the allocator's caches are warm (seconds to
 * a minute), so growth beyond that (half again, plus room for caches filled late) is a leak
 * or runaway fragmentation. Short runs end their first tenth before the plateau: read the
 * bound on runs of several minutes.
 *
 * --pressure: sets RLIMIT_AS to --limit-mib (96 MiB by default, of which the program and
 * its libraries map about 15) and runs itself again under it (the allocator starts under
 * the limit, as under `ulimit -v`), so allocations fail regularly. Every refusal must be
 * NULL with errno ENOMEM (posix_memalign: returns ENOMEM; new: std::bad_alloc); the run
 * fails if no request of at most 4 MiB was refused (the mode tested nothing). After the mix
 * everything is freed; a new thread then allocates 48 MiB of the mix under the same limit
 * (reported: recovered=yes; glibc's per-thread arenas keep address space, so this is not
 * required) and again with the limit lifted, where every request must succeed
 * (recovered=after-lifting-limit). No RSS bound in this mode.
 *
 * Usage: malloc_soak [--seconds N] [--threads N] [--churn-ops N] [--fork-ms MS]
 *                    [--rss FILE] [--malloc-stats] [--pressure [--limit-mib MIB]]
 * --malloc-stats: calls malloc_stats() (the allocator's books, on stderr) before the final
 * frees. */
#define _GNU_SOURCE
#include "soak.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 4096
#define LOCAL 16
#define MAX_SAMPLES (1 << 18)
#define CHILD_TIMEOUT_S 30

struct slot {
  pthread_mutex_t lock;
  struct soak_obj obj;
};
static struct slot table[SLOTS];

static atomic_long ops_done;
static atomic_int stopping;
static long threads_started, thread_start_failures, forks_done;
static int nthreads = 8;
static long churn_ops = 200000;  /* a worker's life: up to this many operations (0: the run) */

/* ---- the workers ---- */

struct worker {
  pthread_t thread;
  atomic_int done;
  int running;
  uint64_t seed;
};
static struct worker workers[SOAK_MAX_THREADS];

/* One visit of a random table slot. */
static void visit(uint64_t* rng) {
  struct slot* s = &table[soak_below(rng, SLOTS)];
  pthread_mutex_lock(&s->lock);
  if (s->obj.p == NULL) {
    soak_alloc(&s->obj, rng);
  } else {
    uint64_t r = soak_below(rng, 10);
    if (r < 4) soak_release(&s->obj, rng, "before free");
    else if (r < 6) soak_resize(&s->obj, rng);
    else if (r < 7) soak_usable(&s->obj);
    else soak_check(&s->obj, "on a visit");
  }
  pthread_mutex_unlock(&s->lock);
}

/* Leaves obj in an empty slot if one of a few tries finds one; otherwise frees it. */
static void hand_off(struct soak_obj* obj, uint64_t* rng) {
  for (int t = 0; t < 4 && obj->p != NULL; ++t) {
    struct slot* s = &table[soak_below(rng, SLOTS)];
    if (pthread_mutex_trylock(&s->lock) != 0) continue;
    if (s->obj.p == NULL && soak_check(obj, "before hand-off")) {
      s->obj = *obj;
      obj->p = NULL;
    }
    pthread_mutex_unlock(&s->lock);
  }
  if (obj->p != NULL) soak_release(obj, rng, "at thread exit");
}

static void* worker_main(void* arg) {
  struct worker* w = arg;
  uint64_t rng = w->seed;
  struct soak_obj local[LOCAL] = {{0}};
  long budget = churn_ops ? churn_ops / 10 + (long)soak_below(&rng, churn_ops) : -1, n = 0;
  for (; n != budget && !atomic_load_explicit(&stopping, memory_order_relaxed); ++n) {
    if (soak_below(&rng, 8) != 0) {
      visit(&rng);
    } else {
      struct soak_obj* o = &local[soak_below(&rng, LOCAL)];
      if (o->p == NULL) soak_alloc(o, &rng);
      else if (soak_below(&rng, 2) == 0) soak_release(o, &rng, "before a local free");
      else soak_resize(o, &rng);
    }
    if ((n & 1023) == 1023) atomic_fetch_add_explicit(&ops_done, 1024, memory_order_relaxed);
  }
  atomic_fetch_add_explicit(&ops_done, n & 1023, memory_order_relaxed);
  for (int i = 0; i < LOCAL; ++i)
    if (local[i].p != NULL) hand_off(&local[i], &rng);
  atomic_store(&w->done, 1);
  return NULL;
}

static uint64_t next_seed = 0x5eed;

/* Starts worker i; a failure (EAGAIN under a memory limit) is counted and retried later. */
static void start_worker(int i) {
  static pthread_attr_t attr;
  static int attr_ready;
  if (!attr_ready) {
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);  /* keeps the address space small */
    attr_ready = 1;
  }
  struct worker* w = &workers[i];
  atomic_store(&w->done, 0);
  w->seed = soak_next(&next_seed);
  int rc = pthread_create(&w->thread, &attr, worker_main, w);
  if (rc != 0) {
    if (rc != EAGAIN || !soak_pressure) soak_fail("FAIL pthread_create: %s", strerror(rc));
    ++thread_start_failures;
    return;
  }
  w->running = 1;
  ++threads_started;
}

/* Joins the workers that have finished and starts their successors (unless stopping). */
static void churn(int restart) {
  for (int i = 0; i < nthreads; ++i) {
    if (workers[i].running && atomic_load(&workers[i].done)) {
      pthread_join(workers[i].thread, NULL);
      workers[i].running = 0;
    }
    if (!workers[i].running && restart) start_worker(i);
  }
}

/* ---- fork ---- */

static void* child_thread(void* arg) {
  uint64_t rng = (uint64_t)(uintptr_t)arg;
  struct soak_obj mine[64] = {{0}};
  for (int i = 0; i < 2000; ++i) {
    struct soak_obj* o = &mine[soak_below(&rng, 64)];
    if (o->p == NULL) soak_alloc(o, &rng);
    else if (soak_below(&rng, 3) == 0) soak_resize(o, &rng);
    else soak_release(o, &rng, "in the child");
  }
  for (int i = 0; i < 64; ++i)
    if (mine[i].p != NULL) soak_release(&mine[i], &rng, "in the child");
  return NULL;
}

/* The child: frees what it can of the parent's table (slots a parent thread held locked at
 * the fork stay locked), then runs its own mix, on a new thread every fourth fork. */
static void child_main(uint64_t rng) {
  for (int i = 0; i < 256; ++i) {
    struct slot* s = &table[soak_below(&rng, SLOTS)];
    if (pthread_mutex_trylock(&s->lock) != 0) continue;
    if (s->obj.p != NULL) soak_release(&s->obj, &rng, "in the child (parent's object)");
    pthread_mutex_unlock(&s->lock);
  }
  child_thread((void*)(uintptr_t)soak_next(&rng));
  if (forks_done % 4 == 0) {
    pthread_t t;
    int rc = pthread_create(&t, NULL, child_thread, (void*)(uintptr_t)soak_next(&rng));
    if (rc == 0) pthread_join(t, NULL);
    else if (!(soak_pressure && rc == EAGAIN)) soak_fail("FAIL child pthread_create: %d", rc);
  }
  _exit(atomic_load(&soak_errors) == 0 ? 0 : 1);
}

static void fork_once(void) {
  uint64_t seed = soak_next(&next_seed);
  pid_t pid = fork();
  if (pid < 0) {
    if (!(soak_pressure && (errno == ENOMEM || errno == EAGAIN)))
      soak_fail("FAIL fork: %s", strerror(errno));
    return;
  }
  if (pid == 0) child_main(seed);
  ++forks_done;
  int status = 0;
  for (int waited_ms = 0;; waited_ms += 5) {
    pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid) break;
    if (waited_ms >= CHILD_TIMEOUT_S * 1000) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      soak_fail("FAIL fork child %d still running after %d s (a lock held across fork?)",
                (int)pid, CHILD_TIMEOUT_S);
      return;
    }
    nanosleep(&(struct timespec){0, 5000000}, NULL);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    soak_fail("FAIL fork child %d: %s %d", (int)pid,
              WIFEXITED(status) ? "exit status" : "killed by signal",
              WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* ---- memory ---- */

/* Reads a /proc file into buf (no malloc); the length read, 0 if it could not. */
static size_t read_proc(const char* path, char* buf, size_t size) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  ssize_t got = read(fd, buf, size - 1);
  close(fd);
  buf[got > 0 ? got : 0] = '\0';
  return got > 0 ? (size_t)got : 0;
}

/* The process's address-space size, RSS, and the part of the RSS freed with MADV_FREE that
 * the kernel has not taken back yet (it does so only when it needs memory), in KiB. */
static void memory_kib(long* vm, long* rss, long* lazy) {
  char buf[4096];
  long pages_vm = 0, pages_rss = 0, kib = sysconf(_SC_PAGESIZE) / 1024;
  *vm = *rss = *lazy = 0;
  if (read_proc("/proc/self/statm", buf, sizeof buf) &&
      sscanf(buf, "%ld %ld", &pages_vm, &pages_rss) == 2) {
    *vm = pages_vm * kib;
    *rss = pages_rss * kib;
  }
  const char* at;
  if (read_proc("/proc/self/smaps_rollup", buf, sizeof buf) && (at = strstr(buf, "LazyFree:")))
    *lazy = strtol(at + 9, NULL, 10);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Frees every object left in the table, checking each. */
static void drain(void) {
  uint64_t rng = 1;
  for (int i = 0; i < SLOTS; ++i)
    if (table[i].obj.p != NULL) soak_release(&table[i].obj, &rng, "at the end");
}

/* ---- the run ---- */

static long rss_samples[MAX_SAMPLES];

/* The largest sample in [from, to). */
static long peak_of(long from, long to) {
  long m = 0;
  for (long i = from; i < to; ++i)
    if (rss_samples[i] > m) m = rss_samples[i];
  return m;
}

/* What the sampling saw: the RSS peak, the peak in use (RSS - LazyFree), the samples of
 * the latter in rss_samples; then the RSS bound's figures (rss_bound_ok). */
struct sampled {
  long nsamples, peak, peak_used;
  long first, last, bound;
};

/* The mix for o->seconds: the main thread replaces finished workers, forks every
 * o->fork_ms, and samples the memory every second (to rss_fd as well, if open). */
static void run_mix(const struct soak_options* o, int rss_fd, struct sampled* m) {
  long vm_kib, rss_kib, lazy_kib;
  double start = now(), next_sample = start + 1, next_fork = start + o->fork_ms / 1000.0;
  churn(1);
  while (now() - start < (double)o->seconds) {
    nanosleep(&(struct timespec){0, 10000000}, NULL);
    churn(1);
    double t = now();
    if (o->fork_ms > 0 && t >= next_fork) {
      fork_once();
      next_fork = now() + o->fork_ms / 1000.0;
    }
    if (t >= next_sample) {
      memory_kib(&vm_kib, &rss_kib, &lazy_kib);
      if (m->nsamples < MAX_SAMPLES) rss_samples[m->nsamples++] = rss_kib - lazy_kib;
      if (rss_kib > m->peak) m->peak = rss_kib;
      if (rss_kib - lazy_kib > m->peak_used) m->peak_used = rss_kib - lazy_kib;
      if (rss_fd >= 0)
        dprintf(rss_fd, "%.0f %ld %ld %ld %ld\n", t - start, rss_kib, lazy_kib, vm_kib,
                atomic_load(&ops_done));
      next_sample += 1;
    }
  }
}

/* The RSS bound (see the top of the file), on the peaks in use of the first and last
 * tenth: 1 if it holds (always outside the normal mode, or without samples). */
static int rss_bound_ok(struct sampled* m, int pressure_mode) {
  long tenth = m->nsamples >= 10 ? m->nsamples / 10 : 1;
  m->first = m->nsamples ? peak_of(0, tenth) : 0;
  m->last = m->nsamples ? peak_of(m->nsamples - tenth, m->nsamples) : 0;
  m->bound = m->first + m->first / 2 + 64 * 1024;
  if (!pressure_mode && m->nsamples > 0 && m->last > m->bound) {
    fprintf(stderr, "FAIL RSS grew: the last tenth peaked at %ld KiB in use, above 1.5 x %ld + 64 MiB\n",
            m->last, m->first);
    return 0;
  }
  return 1;
}

/* The calls per entry point and the result line. */
static void report(const struct soak_options* o, const struct sampled* m, long enomem,
                   long enomem_small,
                   const char* recovered, int ok) {
  printf("calls:");
  for (int i = 0; i < SOAK_KINDS + 8; ++i)
    if (*soak_call_name(i)) printf(" %s=%ld", soak_call_name(i), atomic_load(&soak_calls[i]));
  printf("\nsoak-result mode=%s seconds=%ld threads=%d ops=%ld forks=%ld threads_started=%ld "
         "thread_start_failures=%ld peak_rss_kib=%ld peak_used_kib=%ld first_used_kib=%ld last_used_kib=%ld "
         "used_bound_kib=%ld enomem=%ld enomem_small=%ld recovered=%s errors=%ld verdict=%s\n",
         o->pressure ? "pressure" : "normal", o->seconds, nthreads,
         atomic_load(&ops_done), forks_done, threads_started, thread_start_failures, m->peak,
         m->peak_used, m->first, m->last, m->bound, enomem, enomem_small,
         recovered, atomic_load(&soak_errors), ok ? "ok" : "FAIL");
}

int main(int argc, char** argv) {
  struct soak_options opt;
  soak_parse_options(argc, argv, &opt);
  nthreads = opt.threads;
  churn_ops = opt.churn_ops;
  int rss_fd = -1;
  if (opt.rss_path && (rss_fd = open(opt.rss_path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0) {
    fprintf(stderr, "%s: cannot write %s: %s\n", argv[0], opt.rss_path, strerror(errno));
    return 2;
  }
  soak_pressure = opt.pressure;
  soak_init_ops();
  for (int i = 0; i < SLOTS; ++i) pthread_mutex_init(&table[i].lock, NULL);
  /* --pressure: the program runs itself again under the limit (soak_pressure.c). */
  if (opt.pressure && !getenv("SOAK_UNDER_LIMIT")) return soak_run_under_limit(argv, opt.limit_mib);
  if (opt.pressure) {
    long vm_kib, rss_kib, lazy_kib;
    memory_kib(&vm_kib, &rss_kib, &lazy_kib);
    printf("soak: RLIMIT_AS %ld MiB from the start (address space now %ld MiB)\n",
           soak_limit_mib(), vm_kib / 1024);
    fflush(stdout);
  }

  struct sampled m = {0};
  run_mix(&opt, rss_fd, &m);
  atomic_store(&stopping, 1);
  for (int i = 0; i < nthreads; ++i)
    if (workers[i].running) pthread_join(workers[i].thread, NULL);
  if (opt.malloc_stats) malloc_stats();  /* the allocator's books, to stderr */
  drain();
  if (rss_fd >= 0) close(rss_fd);

  int ok = 1;
  const char* recovered = "n/a";
  long enomem = atomic_load(&soak_enomem), enomem_small = atomic_load(&soak_enomem_small);
  if (opt.pressure && !soak_check_recovery(opt.limit_mib, enomem_small, &recovered)) ok = 0;
  if (!rss_bound_ok(&m, opt.pressure)) ok = 0;
  if (atomic_load(&soak_errors) != 0) ok = 0;
  if (atomic_load(&ops_done) == 0) {
    fprintf(stderr, "FAIL no operation was done\n");
    ok = 0;
  }
  report(&opt, &m, enomem, enomem_small, recovered, ok);
  return ok ? 0 : 1;
}
