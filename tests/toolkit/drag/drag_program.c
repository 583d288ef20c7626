/* A program for drag_test: it plays the recorder's part itself, issuing the drag requests
 * (strata/protocol/drag.h) around accesses to objects laid out in a static arena, in a
 * pattern the test knows the records of. The pattern is the first argument:
 *   hello      exits 0 when the tool answers HELLO, 4 when nothing does (not under the tool)
 *   pattern    objects created, used between later requests, released, one left live, and
 *              a release of an address no object starts at
 *   straddle   one 8-byte store straddling two adjacent objects
 *   syscall    an object filled by read(2): the kernel's write counts as a use
 *   reuse      an address used, released, used while free, reused by a new object; and an
 *              object created over a live one's bytes, which ends the live one
 *   crash      some requests, then SIGSEGV
 *   fork       a fork child uses and releases objects; only the parent's records count
 * Built without sanitizers, which do not run under Valgrind. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <valgrind/valgrind.h>

#include "strata/protocol/drag.h"

static _Alignas(64) unsigned char arena[256];

static void create(uint64_t seq, uint64_t id, void* addr, uint64_t size)
{
   VALGRIND_DO_CLIENT_REQUEST_STMT(STRATA_DRAG_CREATE, seq, id, addr, size, 0);
}

static void release(uint64_t seq, void* addr)
{
   VALGRIND_DO_CLIENT_REQUEST_STMT(STRATA_DRAG_RELEASE, seq, addr, 0, 0, 0);
}

static void store(void* p) { *(volatile unsigned char*)p = 1; }
static unsigned char load(const void* p) { return *(const volatile unsigned char*)p; }

/* Object i of the pattern: 16 bytes at arena + 32 i, so they are apart. */
static unsigned char* object(int i) { return arena + 32 * i; }

static int pattern(void)
{
   create(0, 0, object(0), 16);
   create(1, 1, object(1), 16);
   create(2, 2, object(2), 16);
   store(object(0) + 15);          /* object 0: last used after event 2 */
   create(3, 3, object(3), 16);    /* object 3: never used */
   (void)load(object(1));          /* object 1: after 3, for now */
   release(4, object(0));          /* (0, 2, 4) */
   store(object(2) + 7);           /* object 2: after 4 */
   release(6, object(2));          /* (2, 4, 6); event 5 made no request */
   (void)load(object(1) + 8);      /* object 1: after 6 */
   release(7, object(1));          /* (1, 6, 7) */
   release(8, object(3) + 1);      /* no object starts there: ignored */
   store(object(0));               /* released: nobody's use */
   return 0;                       /* object 3 at exit: (3, 3, at exit) */
}

typedef uint64_t unaligned_u64 __attribute__((aligned(1)));

static int straddle(void)
{
   create(0, 10, arena, 8);
   create(1, 11, arena + 8, 8);
   create(2, 12, arena + 16, 8);
   create(3, 13, arena + 64, 8);
   *(volatile unaligned_u64*)(arena + 4) = 1;  /* bytes 4..11: objects 10 and 11 */
   release(4, arena);                          /* (10, 3, 4) */
   release(5, arena + 8);                      /* (11, 3, 5) */
   release(6, arena + 16);                     /* (12, 2, 6) */
   release(7, arena + 64);                     /* (13, 3, 7) */
   return 0;
}

static int syscall_use(void)
{
   int fd = open("/dev/zero", O_RDONLY);
   create(0, 0, object(0), 16);
   create(1, 1, object(1), 16);
   if (fd < 0 || read(fd, object(0), 16) != 16) return 3;  /* object 0: after 1 */
   close(fd);
   release(2, object(0));  /* (0, 1, 2) */
   release(3, object(1));  /* (1, 1, 3) */
   return 0;
}

static int reuse(void)
{
   create(0, 0, object(0), 16);
   (void)load(object(0));       /* object 0: after 0 */
   release(1, object(0));       /* (0, 0, 1) */
   store(object(0));            /* free bytes: nobody's use */
   create(2, 1, object(0), 16); /* the same bytes, a new object */
   create(3, 2, object(1), 16);
   (void)load(object(0) + 4);   /* object 1: after 3 */
   release(4, object(0));       /* (1, 3, 4) */
   release(5, object(1));       /* (2, 3, 5) */
   create(6, 3, object(2), 16);
   create(7, 4, object(2) + 8, 16);  /* over object 3's bytes: (3, 6, 7) */
   return 0;                    /* (4, 7, at exit) */
}

static int crash(void)
{
   create(0, 0, object(0), 16);
   create(1, 1, object(1), 16);
   store(object(0));        /* object 0: after 1 */
   release(2, object(1));   /* (1, 1, 2) */
   *(volatile int*)(uintptr_t)8 = 0;  /* SIGSEGV: object 0 at exit, (0, 1, at exit) */
   return 0;
}

static int fork_child(void)
{
   pid_t pid;
   int status;
   create(0, 0, object(0), 16);
   create(1, 1, object(1), 16);
   pid = fork();
   if (pid < 0) return 3;
   if (pid == 0) {           /* none of this reaches the file */
      store(object(0));
      release(2, object(0));
      create(3, 5, object(2), 16);
      store(object(1));
      return 0;              /* exit, not _exit: the tool's end runs in the child too */
   }
   if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      return 3;
   release(2, object(1));    /* (1, 1, 2) */
   return 0;                 /* (0, 0, at exit): the child's use is not the parent's */
}

int main(int argc, char** argv)
{
   const char* mode = argc > 1 ? argv[1] : "";
   if (strcmp(mode, "hello") == 0) {
      uint64_t answer = VALGRIND_DO_CLIENT_REQUEST_EXPR(0, STRATA_DRAG_HELLO, 0, 0, 0, 0, 0);
      return answer == STRATA_DRAG_HELLO_ANSWER ? 0 : answer == 0 ? 4 : 5;
   }
   if (strcmp(mode, "pattern") == 0) return pattern();
   if (strcmp(mode, "straddle") == 0) return straddle();
   if (strcmp(mode, "syscall") == 0) return syscall_use();
   if (strcmp(mode, "reuse") == 0) return reuse();
   if (strcmp(mode, "crash") == 0) return crash();
   if (strcmp(mode, "fork") == 0) return fork_child();
   fprintf(stderr, "drag_program: unknown mode '%s'\n", mode);
   return 2;
}
