/* record_sites_*_program: allocations from known functions, for `strata record --sites`
   (record_sites_test). a() mallocs 10 x 1000 bytes, b() callocs 20 x 3000, c() grows one
   block with realloc, each call on the line marked "site:" (the test finds it). The test
   builds this file three ways: with frame pointers, without, and without frame pointers or
   unwind tables (a stack the walk cannot go past a() or b() in).
   Usage: PROGRAM serial | threads | fork | plugin LIBRARY */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kThreads = 4, kA = 10, kB = 20 };

static void* volatile gSink;

__attribute__((noinline)) void a(void) {
  for (int i = 0; i < kA; ++i) {
    void* p = malloc(1000); /* site: a */
    gSink = p;
    free(p);
  }
}

__attribute__((noinline)) void b(void) {
  for (int i = 0; i < kB; ++i) {
    void* p = calloc(1, 3000); /* site: b */
    gSink = p;
    free(p);
  }
}

__attribute__((noinline)) void c(void) {
  void* p = malloc(100);
  for (int i = 1; i <= 4; ++i) p = realloc(p, 5000 * (size_t)i); /* site: c */
  gSink = p;
  free(p);
}

static void* worker(void* arg) {
  (void)arg;
  a();
  b();
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  if (strcmp(argv[1], "serial") == 0) {
    a();
    b();
    c();
  } else if (strcmp(argv[1], "threads") == 0) {
    pthread_t t[kThreads];
    for (int i = 0; i < kThreads; ++i)
      if (pthread_create(&t[i], NULL, worker, NULL) != 0) return 10;
    for (int i = 0; i < kThreads; ++i) pthread_join(t[i], NULL);
  } else if (strcmp(argv[1], "fork") == 0) {
    /* The parent's 1000-byte objects are live across fork: the child's trace re-creates
       them (with no site), then the child calls b(). */
    void* live[kA];
    for (int i = 0; i < kA; ++i) live[i] = malloc(1000);
    const pid_t child = fork();
    if (child < 0) return 11;
    if (child == 0) {
      b();
      _exit(0);
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child || status != 0) return 12;
    for (int i = 0; i < kA; ++i) free(live[i]);
  } else if (strcmp(argv[1], "plugin") == 0 && argc == 3) {
    /* A library loaded, used and unloaded while the program runs: its sites still name it. */
    void* lib = dlopen(argv[2], RTLD_NOW);
    if (lib == NULL) return 13;
    void (*plugin)(void) = (void (*)(void))dlsym(lib, "plugin_alloc");
    if (plugin == NULL) return 14;
    plugin();
    dlclose(lib);
  } else {
    return 2;
  }
  return 0;
}
