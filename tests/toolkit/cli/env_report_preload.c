/* A stand-in allocator for the allocator-spec tests: it takes over malloc and free by handing
 * them to the C library's (unless built with STRATA_TEST_NO_TAKEOVER, which makes a library
 * that preloads but leaves malloc alone), and, in any program but strata-probe, writes the
 * environment it was started with to the file named by STRATA_TEST_ENV_REPORT (appending, one
 * NAME=VALUE per line, then a line "--"), so a test sees what a spec put there. With
 * STRATA_TEST_CRASH=1 it raises SIGSEGV in every program: a setting that breaks an allocator. */
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char** environ;

#ifndef STRATA_TEST_NO_TAKEOVER
#include "common/forward_to_libc.h"
#endif

/* Writes all of `s`; gives up quietly on an error (the test then misses the line). */
static void put(int fd, const char* s) {
  size_t n = strlen(s);
  while (n > 0) {
    const ssize_t w = write(fd, s, n);
    if (w <= 0) return;
    s += w;
    n -= (size_t)w;
  }
}

__attribute__((constructor)) static void report(void) {
  const char* crash = getenv("STRATA_TEST_CRASH");
  if (crash != NULL && strcmp(crash, "1") == 0) raise(SIGSEGV);
  const char* path = getenv("STRATA_TEST_ENV_REPORT");
  if (path == NULL) return;
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    const char* base = strrchr(exe, '/');
    if (base != NULL && strcmp(base + 1, "strata-probe") == 0) return;
  }
  const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return;
  for (char** e = environ; *e != NULL; ++e) {
    put(fd, *e);
    put(fd, "\n");
  }
  put(fd, "--\n");
  close(fd);
}
