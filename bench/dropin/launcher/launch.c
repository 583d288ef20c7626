/* dropin_launch REPORT REPEAT PRELOAD COMMAND [ARG...]: runs COMMAND REPEAT times in a row,
 * each a fresh fork and exec with LD_PRELOAD=PRELOAD in its environment ("-": none), and
 * writes one line to the file REPORT:
 *
 *   runs N wall_s SECONDS maxrss_kib KIB status STATUS
 *
 * SECONDS from the first fork to the last wait4, KIB the largest ru_maxrss of the runs (the
 * command and the children it waited for), STATUS the first wait status that was not a
 * clean exit 0 (0 if none; the runs stop there). bench/dropin_suite.py runs every command
 * through it because ru_maxrss survives exec: a program forked straight from the Python
 * driver would report at least the driver's own resident size, where one forked from this
 * small program starts from a few hundred KiB. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Seconds on the monotonic clock. */
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Forks and execs the command with the preload set (or removed); returns its pid. */
static pid_t spawn(char** argv, const char* preload) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  if (strcmp(preload, "-") == 0) unsetenv("LD_PRELOAD");
  else setenv("LD_PRELOAD", preload, 1);
  execvp(argv[0], argv);
  fprintf(stderr, "dropin_launch: cannot run %s: %s\n", argv[0], strerror(errno));
  _exit(127);
}

/* Runs the command REPEAT times and writes the report (see the top of this file). */
int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s REPORT REPEAT PRELOAD|- COMMAND [ARG...]\n", argv[0]);
    return 2;
  }
  const long repeat = strtol(argv[2], NULL, 10);
  const double start = now();
  long maxrss = 0, runs = 0;
  int bad = 0;
  for (long i = 0; i < repeat && bad == 0; ++i) {
    const pid_t pid = spawn(argv + 4, argv[3]);
    int status = 0;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) < 0) {
      bad = 0x7f00; /* as if exit status 127 */
      break;
    }
    ++runs;
    if (ru.ru_maxrss > maxrss) maxrss = ru.ru_maxrss;
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) bad = status;
  }
  const double wall = now() - start;
  FILE* out = fopen(argv[1], "w");
  if (out == NULL) return 2;
  fprintf(out, "runs %ld wall_s %.6f maxrss_kib %ld status %d\n", runs, wall, maxrss, bad);
  fclose(out);
  return 0;
}
