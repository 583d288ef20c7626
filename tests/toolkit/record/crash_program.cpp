// record_crash_program MODE: ends in the way MODE says, after allocations record_test looks
// for in the trace.
//   abort   100000 malloc(1 + i % 1000) kept live (several trace chunks), malloc(4242), abort()
//   segv    malloc(4343), then a write through a null pointer
//   _exit   malloc(4444), _exit(5)
//   exit3   malloc(4545), return 3 from main
//   many3   100000 malloc(1 + i % 1000), then malloc(4545), return 3 from main
//   quick   malloc(4646), quick_exit(6)
//   kill    100000 malloc(1 + i % 1000), then SIGKILL to itself
//   pipe    malloc(4747), then a write to a pipe with no reader (killed by SIGPIPE)
//   sleep   malloc(5151), 20 ms of malloc/free, a 50 ms sleep, malloc(5252), return 0
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

namespace {
void escape(const void* p) { asm volatile("" : : "r"(p) : "memory"); }
void many() {
  for (int i = 0; i < 100000; ++i) escape(malloc(static_cast<size_t>(1 + i % 1000)));
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const char* mode = argv[1];
  if (strcmp(mode, "abort") == 0) {
    many();
    escape(malloc(4242));
    abort();
  }
  if (strcmp(mode, "segv") == 0) {
    escape(malloc(4343));
    volatile int* volatile nowhere = nullptr;
    *nowhere = 1;
    return 20;
  }
  if (strcmp(mode, "_exit") == 0) {
    escape(malloc(4444));
    _exit(5);
  }
  if (strcmp(mode, "exit3") == 0 || strcmp(mode, "many3") == 0) {
    if (mode[0] == 'm') many();
    escape(malloc(4545));
    return 3;
  }
  if (strcmp(mode, "quick") == 0) {
    escape(malloc(4646));
    quick_exit(6);
  }
  if (strcmp(mode, "kill") == 0) {
    many();
    kill(getpid(), SIGKILL);
    return 21;
  }
  if (strcmp(mode, "pipe") == 0) {
    escape(malloc(4747));
    int fds[2];
    if (pipe(fds) != 0) return 22;
    close(fds[0]);
    const char byte = 'x';
    (void)!write(fds[1], &byte, 1);
    return 23;
  }
  if (strcmp(mode, "sleep") == 0) {
    escape(malloc(5151));
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
      free(malloc(64));
      clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 20000000L);
    usleep(50000);
    escape(malloc(5252));
    return 0;
  }
  return 2;
}
