/* A deliberately misbehaving "allocator" for the compare tests: a library that takes the place
 * of one of Strata's (through STRATA_LIB_DIR) and takes over malloc and free by handing them to
 * the C library's, so strata's preload check and its replays pass, but makes the program
 * itself misbehave when it is preloaded into anything other than the replayer or the probe:
 * STRATA_TEST_MISBEHAVE=crash raises SIGSEGV, exit exits with status 3, output prints an
 * extra line. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/forward_to_libc.h"

__attribute__((constructor)) static void misbehave(void) {
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return;
  exe[n] = '\0';
  const char* base = strrchr(exe, '/');
  base = base != NULL ? base + 1 : exe;
  if (strcmp(base, "strata-replayer") == 0 || strcmp(base, "strata-probe") == 0) return;
  const char* mode = getenv("STRATA_TEST_MISBEHAVE");
  if (mode == NULL) return;
  if (strcmp(mode, "crash") == 0) raise(SIGSEGV);
  if (strcmp(mode, "exit") == 0) _exit(3);
  if (strcmp(mode, "output") == 0) {
    static const char line[] = "corrupted by the test allocator\n";
    if (write(1, line, sizeof line - 1) < 0) _exit(4);
  }
}
