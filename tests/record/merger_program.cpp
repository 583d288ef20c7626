// record_merger_program CALLS: makes CALLS malloc/free pairs, waits 50 ms (time for a merger
// thread to start), then prints how many threads the process has, for record_test's check of
// when the recorder's merger thread starts.
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const long calls = strtol(argv[1], nullptr, 10);
  for (long i = 0; i < calls; ++i) {
    void* p = malloc(static_cast<size_t>(16 + i % 64));
    asm volatile("" : : "r"(p) : "memory");
    free(p);
  }
  usleep(50000);
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return 3;
  int n = 0;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  printf("%d\n", n);
  return 0;
}
