// record_touch_program MODE: large objects of which a known part is touched, for record_test's
// Touch checks. Transparent huge pages are turned off for the process first, so that touching
// one byte makes one page resident, not 2 MiB (the measurement is by resident pages).
//   calloc   calloc(1, 8 MiB), one byte written in its fourth page, freed
//   memset   malloc(1 MiB), every byte written, freed
//   realloc  malloc(64 KiB) all written, realloc to 4 MiB, the next 64 KiB written, freed
//   live     malloc(2 MiB), its first 40 KiB written, left live at exit
//   fork     malloc(4 MiB), its first 16 KiB written, fork; the child writes the next 16 KiB and
//            exits 0 (the object live); the parent waits, then exits 0 (the object live);
//            prints the child's pid
//   aligned  aligned_alloc(4096, 2 MiB), its first 40 KiB written, left live at exit
//   sampling 200 objects of 64 KiB written whole, then 200 of 64 KiB of which only the first
//            page is written, each freed before the next is made
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {
void escape(const void* p) { asm volatile("" : : "r"(p) : "memory"); }
constexpr size_t kKiB = 1024, kMiB = 1024 * kKiB;
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
  const char* mode = argv[1];
  if (strcmp(mode, "calloc") == 0) {
    char* p = static_cast<char*>(calloc(1, 8 * kMiB));
    if (p == nullptr) return 10;
    p[3 * 4096 + 100] = 1;
    escape(p);
    free(p);
    return 0;
  }
  if (strcmp(mode, "memset") == 0) {
    char* p = static_cast<char*>(malloc(kMiB));
    if (p == nullptr) return 10;
    memset(p, 7, kMiB);
    escape(p);
    free(p);
    return 0;
  }
  if (strcmp(mode, "realloc") == 0) {
    char* p = static_cast<char*>(malloc(64 * kKiB));
    if (p == nullptr) return 10;
    memset(p, 1, 64 * kKiB);
    escape(p);
    char* q = static_cast<char*>(realloc(p, 4 * kMiB));
    if (q == nullptr) return 11;
    memset(q + 64 * kKiB, 2, 64 * kKiB);
    escape(q);
    free(q);
    return 0;
  }
  if (strcmp(mode, "live") == 0) {
    char* p = static_cast<char*>(malloc(2 * kMiB));
    if (p == nullptr) return 10;
    memset(p, 3, 40 * kKiB);
    escape(p);
    return 0;
  }
  if (strcmp(mode, "aligned") == 0) {
    char* p = static_cast<char*>(aligned_alloc(4096, 2 * kMiB));
    if (p == nullptr) return 10;
    memset(p, 3, 40 * kKiB);
    escape(p);
    return 0;
  }
  if (strcmp(mode, "sampling") == 0) {
    for (int i = 0; i < 400; ++i) {
      char* p = static_cast<char*>(malloc(64 * kKiB));
      if (p == nullptr) return 10;
      memset(p, i, i < 200 ? 64 * kKiB : 4096);
      escape(p);
      free(p);
    }
    return 0;
  }
  if (strcmp(mode, "fork") == 0) {
    char* p = static_cast<char*>(malloc(4 * kMiB));
    if (p == nullptr) return 10;
    memset(p, 4, 16 * kKiB);
    escape(p);
    fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) return 11;
    if (pid == 0) {
      memset(p + 16 * kKiB, 5, 16 * kKiB);
      escape(p);
      exit(0);
    }
    printf("%ld\n", static_cast<long>(pid));
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return 12;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 13;
  }
  return 2;
}
