/* A program with a known allocation sequence, traced by glibc's mtrace() (run it with
   LD_PRELOAD=libc_malloc_debug.so.0 MALLOC_TRACE=FILE): mtrace_test imports the file it
   writes and checks the events one by one. Built with -O0 -fno-builtin so that every call
   happens as written. Nothing between mtrace() and muntrace() may allocate besides these. */
#include <malloc.h>
#include <mcheck.h>
#include <stdlib.h>

int main(void) {
  mtrace();
  char* a = malloc(10);        /* + a 0xa */
  char* b = calloc(3, 4);      /* + b 0xc */
  a = realloc(a, 100);         /* < a, > a' 0x64 */
  char* c = realloc(NULL, 5);  /* + c 0x5 */
  free(b);                     /* - b */
  c = realloc(c, 0);           /* - c (glibc frees and returns NULL) */
  free(c);                     /* free(NULL): no line */
  void* e = memalign(64, 30);  /* + e 0x1e */
  free(e);                     /* - e */
  free(a);                     /* - a' */
  muntrace();
  return 0;
}
