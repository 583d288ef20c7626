// record_fork_program: allocates, forks, and both processes go on allocating, so record_test
// can check that each writes its own trace and that the child's starts with the objects it
// inherited. Before the fork: malloc(111), malloc(222), calloc(3, 111), free(the 222 one),
// a reap with one 77-byte object. Child: frees the 111 object and the reap object, malloc
// and free of 444, frees the 333 object, destroys the reap, exits 0. Parent: waits, malloc
// and free of 555, frees its objects, exits with 0 if the child exited 0. Prints the
// child's pid on stdout.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strata/reap.h"

namespace {
void escape(const void* p) { asm volatile("" : : "r"(p) : "memory"); }
}  // namespace

int main() {
  void* a = malloc(111);
  void* b = malloc(222);
  void* c = calloc(3, 111);
  escape(a), escape(b), escape(c);
  free(b);
  strata_reap* reap = reap_create(nullptr);
  void* x = reap_malloc(reap, 77);
  escape(x);
  fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) return 10;
  if (pid == 0) {
    free(a);
    reap_free(reap, x);
    void* d = malloc(444);
    escape(d);
    free(d);
    free(c);
    reap_destroy(reap);
    exit(0);
  }
  printf("%ld\n", static_cast<long>(pid));
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 11;
  void* e = malloc(555);
  escape(e);
  free(e);
  free(a);
  free(c);
  reap_destroy(reap);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 12;
}
