/* How `strata drag` learns when each object was last used: the recorder (libstrata-record.so,
 * preloaded into the program, which runs under Valgrind with Strata's drag tool) tells the
 * tool, through Valgrind client requests, where each object it writes into the trace lives
 * and when it ends; the tool watches every load and store of the program and, when an object
 * ends (or at exit), writes which trace event was the last one before the object's last use.
 * `strata drag` then reads the trace and that file together (docs/toolkit/drag.md).
 *
 * C, so that the tool (C, built against Valgrind's tool headers) and the recorder (C++) share
 * it. Nothing here needs Valgrind: the requests' codes and the file's layout only.
 *
 * Client requests (VALGRIND_DO_CLIENT_REQUEST_STMT, code then up to five words):
 *   STRATA_DRAG_CREATE   (seq, id, addr, size)  event `seq` of the trace created object `id`,
 *                                               whose bytes are [addr, addr + size); size > 0
 *   STRATA_DRAG_RELEASE  (seq, addr)            event `seq` ends the object created at addr
 *                                               (free, delete, realloc of it, or the
 *                                               reap_clear / reap_destroy that frees it); its
 *                                               bytes are no longer watched
 * `seq` is the event's index in the trace: 0 for its first event, counting every event
 * written (touch, thread start and end events too). Requests come in trace order. An access
 * made after the request of event s and before the next request is "after event s": the
 * object's last use is the largest such s over its accesses, or its creating event when it
 * was never accessed after it.
 *
 * The last-use file, written by the tool (all integers little-endian u64):
 *   header  "STRATADG" (8 bytes), version (1), the Valgrind-side pid of the program
 *   record  id, last-use seq, release seq     one per object, when it ends; objects still
 *                                             live at exit get release seq
 *                                             STRATA_DRAG_AT_EXIT, written at exit
 *   trailer STRATA_DRAG_END, objects written, 0     written when the run ends (an exit, or a
 *                                                 fatal signal Valgrind saw)
 * A file without the trailer is a run that was killed outright (SIGKILL): its records are
 * still valid, in the order the objects ended, up to the last one flushed.
 */
#ifndef STRATA_DRAG_PROTOCOL_H
#define STRATA_DRAG_PROTOCOL_H

/* How `strata drag` starts the tool: valgrind --tool=STRATA_DRAG_TOOL_NAME
 * STRATA_DRAG_OUT_OPTION=FILE ... (FILE expanded as Valgrind expands --log-file: %p is the
 * pid). Valgrind finds the tool's file as NAME-PLATFORM (strata-drag-amd64-linux). */
#define STRATA_DRAG_TOOL_NAME "strata-drag"
#define STRATA_DRAG_OUT_OPTION "--drag-out"

/* Valgrind's VG_USERREQ_TOOL_BASE('S', 'D'): tool requests start at ('S' << 24 | 'D' << 16). */
#define STRATA_DRAG_REQUEST_BASE (((unsigned)'S' << 24) | ((unsigned)'D' << 16))
#define STRATA_DRAG_CREATE (STRATA_DRAG_REQUEST_BASE + 1)
#define STRATA_DRAG_RELEASE (STRATA_DRAG_REQUEST_BASE + 2)
/* Answered with this by the tool (and with 0 when not running under it): lets the recorder
 * check that the drag tool, not another Valgrind tool, is watching. */
#define STRATA_DRAG_HELLO (STRATA_DRAG_REQUEST_BASE + 3)
#define STRATA_DRAG_HELLO_ANSWER 0x5354524154414447ull /* "STRATADG" as a number */

#define STRATA_DRAG_MAGIC "STRATADG"
#define STRATA_DRAG_VERSION 1
#define STRATA_DRAG_AT_EXIT 0xFFFFFFFFFFFFFFFEull
#define STRATA_DRAG_END 0xFFFFFFFFFFFFFFFFull

#endif /* STRATA_DRAG_PROTOCOL_H */
