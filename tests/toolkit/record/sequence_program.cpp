// record_sequence_program: a fixed, known sequence of allocation calls through every entry
// point the recorder interposes (C functions, aligned ones, every operator new/delete form,
// the reap, region and obstack C APIs), for record_test to check event for event. The sequence is
// fenced by malloc(1000001)/free and malloc(1000002)/free so the test can find it among the
// C runtime's own allocations. Built with -fno-builtin and without allocation elision, so
// every call in the source is a call at run time.
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>

#include <cstddef>
#include <new>

#define obstack_chunk_alloc malloc
#define obstack_chunk_free free
#include "strata/obstack.h"
#include "strata/reap.h"
#include "strata/region.h"

namespace {
// Keeps the compiler from reasoning about p.
void escape(const void* p) { asm volatile("" : : "r"(p) : "memory"); }
// A request no allocator can satisfy (2^62 bytes), hidden from the compiler.
volatile std::size_t gHuge = std::size_t{1} << 62;
// A type needing the aligned operator new.
struct alignas(64) Aligned {
  char bytes[64];
};
}  // namespace

int main() {
  void* mark = malloc(1000001);
  escape(mark);
  free(mark);

  void* m = malloc(100);
  void* c = calloc(10, 20);
  void* r = realloc(nullptr, 50);
  r = realloc(r, 5000);
  r = realloc(r, 10);
  void* z = malloc(30);
  void* rz = realloc(z, 0);
  free(nullptr);
  errno = 0;
  void* big = malloc(gHuge);
  if (big != nullptr || errno != ENOMEM) return 12;
  errno = 0;
  if (realloc(m, gHuge) != nullptr || errno != ENOMEM) return 13;  // fails; m stays live
  void* ra = reallocarray(nullptr, 4, 25);
  void* ma = memalign(64, 100);
  void* pm = nullptr;
  if (posix_memalign(&pm, 256, 300) != 0) return 10;
  void* aa = aligned_alloc(128, 256);
  void* va = valloc(10);
  void* pv = pvalloc(10);
  escape(m), escape(c), escape(r), escape(rz), escape(big), escape(ra), escape(ma), escape(aa);
  escape(va), escape(pv);

  int* n1 = new int(7);
  int* n2 = new int[10];
  Aligned* na = new Aligned;
  void* nt = ::operator new(77, std::nothrow);
  void* nf = ::operator new(gHuge, std::nothrow);
  escape(n1), escape(n2), escape(na), escape(nt), escape(nf);
  delete n1;
  delete[] n2;
  delete na;
  ::operator delete(nt, std::nothrow);
  ::operator delete(static_cast<void*>(nullptr));
  try {
    void* t = ::operator new(gHuge);
    escape(t);
    return 11;
  } catch (const std::bad_alloc&) {
  }

  free(m);
  free(c);
  free(r);
  free(ra);
  free(ma);
  free(pm);
  free(aa);
  free(va);
  free(pv);

  strata_reap* R = reap_create(nullptr);
  strata_reap* C = reap_create(R);
  void* x = reap_malloc(R, 40);
  void* y = reap_calloc(C, 3, 8);
  void* y2 = reap_realloc(C, y, 100);
  void* w = reap_malloc(C, 16);
  escape(x), escape(y2), escape(w);
  reap_free(R, x);
  reap_free(R, nullptr);
  reap_clear(R);
  reap_destroy(R);

  void* P = nullptr;
  reapCreate(&P, nullptr);
  void* o = reapMalloc(&P, 12);
  escape(o);
  reapFree(&P, o);
  reapFreeAll(&P);
  reapDestroy(&P);

  strata_region* g = region_create(nullptr);
  escape(region_alloc(g, 33));
  escape(region_calloc(g, 2, 5));
  escape(region_strdup(g, "hello"));
  region_clear(g);
  region_destroy(g);

  // An obstack, recorded as a reap: its objects as they are finished, a free back past two
  // of them (newest first), and the free of everything as the reap's destruction.
  struct obstack os;
  obstack_init(&os);
  escape(obstack_alloc(&os, 20));
  obstack_grow(&os, "abc", 3);
  obstack_1grow(&os, 0);
  escape(obstack_finish(&os));
  void* hello = obstack_copy0(&os, "hello", 5);
  escape(obstack_copy(&os, "xy", 2));
  obstack_free(&os, hello);
  escape(obstack_alloc(&os, 8));
  obstack_free(&os, nullptr);

  void* end = malloc(1000002);
  escape(end);
  free(end);
  return 0;
}
