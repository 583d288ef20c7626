/* strata-exec: runs a command as a child of a tiny process and reports its resource usage.
 *
 *   strata-exec FD PROGRAM ARGV0 [ARGS...]
 *
 * Why it exists: Linux keeps a process's peak resident size across fork and exec. A child
 * forked from `strata` (or any large process) starts with the parent's resident pages
 * counted, and exec records the old image's peak, so its ru_maxrss is at least the parent's
 * size: a program that uses 1.5 MiB would report the 20 MiB of whoever started it. This
 * program is linked statically and touches almost nothing, so the command it forks starts
 * from a floor of a few hundred KiB, and the peak RSS it reports is the command's own (and
 * its waited-for descendants').
 *
 * It forks, the child execs PROGRAM (a path, not searched) with the argument vector ARGV0
 * ARGS... and the environment as it is (a PROGRAM without "#!" runs under /bin/sh, as with
 * execvp), and it waits with wait4. It then writes one line to file descriptor FD:
 *   "started ERRNO EXIT SIGNAL MAXRSS_KIB UTIME_US STIME_US\n"
 * (started 0 with ERRNO when exec failed) and exits 0; 125 when it could not run at all.
 * Being static, it ignores LD_PRELOAD, which the command gets as set. */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: strata-exec FD PROGRAM ARGV0 [ARGS...]\n");
    return 125;
  }
  char* end = NULL;
  const long fd = strtol(argv[1], &end, 10);
  if (*argv[1] == '\0' || *end != '\0' || fd < 0 || fcntl((int)fd, F_GETFD) < 0) {
    fprintf(stderr, "strata-exec: '%s' is not an open file descriptor\n", argv[1]);
    return 125;
  }
  fcntl((int)fd, F_SETFD, FD_CLOEXEC);
  int errPipe[2];
  if (pipe2(errPipe, O_CLOEXEC) != 0) return 125;
  const pid_t pid = fork();
  if (pid < 0) return 125;
  if (pid == 0) {
    execv(argv[2], argv + 3);
    int err = errno;
    if (err == ENOEXEC) {
      /* As execvp: a file without "#!" is a script for /bin/sh, which gets its path in
       * place of ARGV0. */
      argv[3] = argv[2];
      argv[2] = (char*)"/bin/sh";
      execv(argv[2], argv + 2);
    }
    ssize_t ignored = write(errPipe[1], &err, sizeof err);
    (void)ignored;
    _exit(127);
  }
  close(errPipe[1]);
  int execErr = 0;
  ssize_t got;
  while ((got = read(errPipe[0], &execErr, sizeof execErr)) < 0 && errno == EINTR) {
  }
  close(errPipe[0]);
  int status = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  while (wait4(pid, &status, 0, &ru) < 0) {
    if (errno != EINTR) return 125;
  }
  const int started = got != (ssize_t)sizeof execErr;
  char line[160];
  const int n = snprintf(line, sizeof line, "%d %d %d %d %ld %lld %lld\n", started,
                         started ? 0 : execErr, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                         WIFSIGNALED(status) ? WTERMSIG(status) : 0, ru.ru_maxrss,
                         (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
                         (long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec);
  if (n <= 0 || write((int)fd, line, (size_t)n) != n) return 125;
  return 0;
}
