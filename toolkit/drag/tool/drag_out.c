/* The drag tool's last-use file (drag_out.h). Integers are written as they lie in memory:
 * the tool is built for amd64 only, which is little-endian as the format requires. */
#include "drag_out.h"

#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_vki.h"

#include "strata/protocol/drag.h"

/* Valgrind's core moves its own log files into the descriptors the program cannot use (above
 * its soft limit), so that a program closing every descriptor does not close them. The tool
 * headers do not declare it; the core library defines it. */
extern Int VG_(safe_fd)(Int oldfd);

/* 64 KiB: a write per few thousand records, small beside Valgrind's own footprint. */
#define DRAG_OUT_BUFFER (64 * 1024)

static Int out_fd = -1;
static UChar buffer[DRAG_OUT_BUFFER];
static SizeT used;
static ULong records;

static void put_u64(ULong v)
{
   if (used + sizeof v > sizeof buffer) drag_out_flush();
   VG_(memcpy)(buffer + used, &v, sizeof v);
   used += sizeof v;
}

void drag_out_open(const HChar* path)
{
   SysRes sr = VG_(open)(path, VKI_O_CREAT | VKI_O_WRONLY | VKI_O_TRUNC, 0644);
   ULong magic;
   if (sr_isError(sr)) {
      VG_(fmsg)("strata-drag: cannot create the last-use file '%s' (error %lu)\n", path,
                (unsigned long)sr_Err(sr));
      VG_(exit)(1);
   }
   out_fd = VG_(safe_fd)((Int)sr_Res(sr));
   tl_assert(sizeof magic == sizeof STRATA_DRAG_MAGIC - 1);
   VG_(memcpy)(&magic, STRATA_DRAG_MAGIC, sizeof magic);
   put_u64(magic);
   put_u64(STRATA_DRAG_VERSION);
   put_u64((ULong)VG_(getpid)());
}

void drag_out_record(ULong id, ULong last_use, ULong release)
{
   if (out_fd < 0) return;
   put_u64(id);
   put_u64(last_use);
   put_u64(release);
   records++;
}

void drag_out_flush(void)
{
   SizeT done = 0;
   if (out_fd < 0) {
      used = 0;
      return;
   }
   while (done < used) {
      Int n = VG_(write)(out_fd, buffer + done, (Int)(used - done));
      if (n <= 0) {
         VG_(umsg)("strata-drag: cannot write the last-use file; its records stop here\n");
         VG_(close)(out_fd);
         out_fd = -1;
         break;
      }
      done += (SizeT)n;
   }
   used = 0;
}

void drag_out_finish(void)
{
   if (out_fd < 0) return;
   put_u64(STRATA_DRAG_END);
   put_u64(records);
   put_u64(0);
   drag_out_flush();
   if (out_fd >= 0) VG_(close)(out_fd);
   out_fd = -1;
}

void drag_out_abandon(void)
{
   used = 0;
   if (out_fd >= 0) VG_(close)(out_fd);
   out_fd = -1;
}
