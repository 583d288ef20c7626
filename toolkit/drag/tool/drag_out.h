/* The drag tool's last-use file (its layout is in strata/protocol/drag.h): a header when it is
 * opened, one record per ended object, a trailer at the end of the run. Written through a
 * fixed buffer, flushed when full, before an exec and at the end, so that a run killed outright
 * leaves every record up to the last flush. */
#ifndef STRATA_DRAG_OUT_H
#define STRATA_DRAG_OUT_H

#include "pub_tool_basics.h"

/* Creates (or truncates) the file at path and writes its header. On failure prints why and
 * exits Valgrind with status 1. */
void drag_out_open(const HChar* path);

void drag_out_record(ULong id, ULong last_use, ULong release);

/* Writes the buffer to the file. */
void drag_out_flush(void);

/* Writes the trailer, flushes and closes the file. */
void drag_out_finish(void);

/* Closes the file without writing what is buffered (a fork child: the parent writes it). */
void drag_out_abandon(void);

#endif /* STRATA_DRAG_OUT_H */
