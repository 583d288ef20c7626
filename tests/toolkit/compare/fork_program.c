/* A command of two processes with known allocations, for `strata compare -- COMMAND` judging
 * every process: the first allocates about 2 MiB in small objects, starts a second process
 * (fork, then exec of itself with the argument "child") that allocates about 8 MiB in larger
 * ones, and waits for it. Each prints a checksum of what it wrote. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Allocates `count` objects of `size` to `size` * 2 bytes, 64 live at a time. */
static unsigned long churn(int count, size_t size) {
  static char* ring[64];
  unsigned long sum = 0;
  for (int i = 0; i < count; ++i) {
    const size_t n = size + (size_t)(i * 37) % size;
    free(ring[i % 64]);
    ring[i % 64] = malloc(n);
    if (ring[i % 64] == NULL) exit(1);
    memset(ring[i % 64], i & 0xff, n);
    sum += (unsigned char)ring[i % 64][n - 1];
  }
  for (int i = 0; i < 64; ++i) {
    free(ring[i]);
    ring[i] = NULL;
  }
  return sum;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "child") == 0) {
    printf("child checksum %lu\n", churn(2000, 4096));
    return 0;
  }
  const unsigned long sum = churn(10000, 128);
  fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    execl("/proc/self/exe", argv[0], "child", (char*)NULL);
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  printf("parent checksum %lu\n", sum);
  return 0;
}
