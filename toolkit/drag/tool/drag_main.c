/* strata-drag, the Valgrind tool `strata drag` runs a program under: registration, options,
 * the client requests of strata/protocol/drag.h, fork, exec and the end of the run.
 *
 *   valgrind --tool=strata-drag --drag-out=FILE PROGRAM...
 *
 * The recorder preloaded into the program announces each object (CREATE) and its end
 * (RELEASE); every load and store of the program marks the live objects it touches as used
 * after the latest request's event (drag_instrument.c, drag_blocks.c); each object's record
 * goes to FILE when it ends, and at the end of the run (an exit or a fatal signal) the objects
 * still live, then the trailer (drag_out.c). A fork child writes nothing: the file is the
 * parent's. */
#include "pub_tool_basics.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_clreq.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_options.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_vkiscnums.h"

#include "strata/protocol/drag.h"

#include "drag_blocks.h"
#include "drag_instrument.h"
#include "drag_out.h"

static const HChar* clo_drag_out;
static Bool in_fork_child;  /* requests and the end of the run are ignored */

static Bool drag_process_cmd_line_option(const HChar* arg)
{
   if VG_STR_CLO (arg, STRATA_DRAG_OUT_OPTION, clo_drag_out) {
   } else {
      return False;
   }
   return True;
}

static void drag_print_usage(void)
{
   VG_(printf)("    --drag-out=FILE    where to write the last-use file (required; %%p is the\n"
               "                       pid, as in --log-file)\n");
}

static void drag_print_debug_usage(void) { VG_(printf)("    (none)\n"); }

static Bool drag_handle_client_request(ThreadId tid, UWord* arg, UWord* ret)
{
   (void)tid;
   if (!VG_IS_TOOL_USERREQ('S', 'D', arg[0])) return False;
   *ret = 0;
   switch (arg[0]) {
   case STRATA_DRAG_HELLO:
      *ret = (UWord)STRATA_DRAG_HELLO_ANSWER;
      return True;
   case STRATA_DRAG_CREATE:
      if (in_fork_child) return True;
      drag_blocks_set_seq(arg[1]);
      drag_blocks_create(arg[1], arg[2], (Addr)arg[3], (SizeT)arg[4]);
      return True;
   case STRATA_DRAG_RELEASE:
      if (in_fork_child) return True;
      drag_blocks_set_seq(arg[1]);
      drag_blocks_release(arg[1], (Addr)arg[2]);
      return True;
   default:
      return False;
   }
}

/* The fork child: the parent writes the buffered records and the file's end. */
static void drag_fork_child(ThreadId tid)
{
   (void)tid;
   in_fork_child = True;
   drag_out_abandon();
   drag_blocks_drop_all();
}

/* Before an exec, every record so far goes to the file: when the exec succeeds the tool's
 * end does not run (the new program runs without it), and the file ends without a trailer. */
static void drag_pre_syscall(ThreadId tid, UInt syscallno, UWord* args, UInt nargs)
{
   (void)tid;
   (void)args;
   (void)nargs;
   if (in_fork_child) return;
   if (syscallno == __NR_execve || syscallno == __NR_execveat) drag_out_flush();
}

static void drag_post_syscall(ThreadId tid, UInt syscallno, UWord* args, UInt nargs, SysRes res)
{
   (void)tid;
   (void)syscallno;
   (void)args;
   (void)nargs;
   (void)res;
}

/* Reads and writes the kernel makes for a system call count as the program's accesses. */
static void drag_syscall_access(CorePart part, ThreadId tid, const HChar* what, Addr a, SizeT n)
{
   (void)part;
   (void)tid;
   (void)what;
   drag_blocks_access(a, n);
}

static void drag_syscall_string(CorePart part, ThreadId tid, const HChar* what, Addr a)
{
   (void)part;
   (void)tid;
   (void)what;
   drag_blocks_access(a, 1);  /* its first byte: enough to find the object it lies in */
}

static void drag_post_clo_init(void)
{
   if (clo_drag_out == NULL || clo_drag_out[0] == '\0') {
      VG_(fmsg)("strata-drag needs --drag-out=FILE, the last-use file to write\n");
      VG_(exit)(1);
   }
   drag_out_open(VG_(expand_file_name)(STRATA_DRAG_OUT_OPTION, clo_drag_out));
}

static void drag_fini(Int exitcode)
{
   const DragBlockStats* s = drag_blocks_stats();
   (void)exitcode;
   if (in_fork_child) return;
   drag_blocks_end_all(STRATA_DRAG_AT_EXIT);
   drag_out_finish();
   if (VG_(clo_verbosity) > 1)
      VG_(umsg)("strata-drag: %llu objects created, %llu released, %llu releases of unknown "
                "addresses, %llu objects ended by a create over them, %llu requests out of "
                "order\n",
                s->created, s->released, s->unknown_releases, s->displaced, s->out_of_order);
}

static void drag_pre_clo_init(void)
{
   VG_(details_name)(STRATA_DRAG_TOOL_NAME);
   VG_(details_version)(NULL);
   VG_(details_description)("when each object of a Strata trace was last used");
   VG_(details_copyright_author)("Strata's drag tool, built on Valgrind.");
   VG_(details_bug_reports_to)("the Strata project");
   VG_(details_avg_translation_sizeB)(275);

   VG_(basic_tool_funcs)(drag_post_clo_init, drag_instrument, drag_fini);
   VG_(needs_command_line_options)(drag_process_cmd_line_option, drag_print_usage,
                                   drag_print_debug_usage);
   VG_(needs_client_requests)(drag_handle_client_request);
   VG_(needs_syscall_wrapper)(drag_pre_syscall, drag_post_syscall);
   VG_(track_pre_mem_read)(drag_syscall_access);
   VG_(track_pre_mem_write)(drag_syscall_access);
   VG_(track_pre_mem_read_asciiz)(drag_syscall_string);
   VG_(atfork)(NULL, NULL, drag_fork_child);

   drag_blocks_init(drag_out_record);
}

VG_DETERMINE_INTERFACE_VERSION(drag_pre_clo_init)
