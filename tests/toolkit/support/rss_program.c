/* A program whose resident size the RSS sampler's test knows (rss_sampler_test.cpp):
 *   rss_program alloc MIB   touches MIB MiB, holds them 400 ms, frees them, sleeps 400 ms
 *   rss_program fork MIB    forks a child that does the same, and waits for it */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pause_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

static int hold(size_t mib) {
  const size_t bytes = mib << 20;
  /* mmap, not malloc: freed memory is certainly returned to the system. */
  char* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 1;
  memset(p, 1, bytes);
  pause_ms(400);
  munmap(p, bytes);
  pause_ms(400);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: rss_program alloc|fork MIB\n");
    return 2;
  }
  const size_t mib = (size_t)strtoul(argv[2], NULL, 10);
  if (strcmp(argv[1], "alloc") == 0) return hold(mib);
  const pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) _exit(hold(mib));
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
