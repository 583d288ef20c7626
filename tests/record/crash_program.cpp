// record_crash_program MODE: ends in the way MODE says, after allocations record_test looks
// for in the trace.
//   abort   100000 malloc(1 + i % 1000) kept live (several trace chunks), malloc(4242), abort()
//   segv    malloc(4343), then a write through a null pointer
//   _exit   malloc(4444), _exit(5)
//   exit3   malloc(4545), return 3 from main
//   quick   malloc(4646), quick_exit(6)
//   kill    100000 malloc(1 + i % 1000), then SIGKILL to itself
#include <signal.h>
#include <stdlib.h>
#include <string.h>
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
  if (strcmp(mode, "exit3") == 0) {
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
  return 2;
}
