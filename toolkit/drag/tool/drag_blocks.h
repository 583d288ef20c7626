/* The drag tool's live blocks: the objects the recorder announced and has not yet released,
 * each with the trace event after which it was last used. An ordered set of disjoint address
 * ranges (a WordFM whose comparator calls overlapping ranges equal, as DHAT's is), with a
 * one-entry cache of the block the last access hit, and the bounds of every live block so that
 * accesses elsewhere (the stack, the program's globals) return at once. Memory is one small
 * struct per live block. */
#ifndef STRATA_DRAG_BLOCKS_H
#define STRATA_DRAG_BLOCKS_H

#include "pub_tool_basics.h"

/* Called when a block ends: its object's id, last-use seq and release seq. */
typedef void (*DragEnded)(ULong id, ULong last_use, ULong release);

/* Counts kept for the tool's -v summary. */
typedef struct {
   ULong created;
   ULong released;
   ULong unknown_releases;  /* a RELEASE of an address no live block starts at */
   ULong displaced;         /* live blocks ended by a CREATE over their bytes */
   ULong out_of_order;      /* requests whose seq was below the current one */
} DragBlockStats;

void drag_blocks_init(DragEnded ended);

/* The seq of the latest request: accesses from now on are "after" it. It never goes back
 * (a request with a smaller seq than the current one is counted and does not lower it). */
void drag_blocks_set_seq(ULong seq);

/* A new object [addr, addr + size) created by event `seq`; its last use is `seq`. Live blocks
 * that overlap it have ended unseen: they end now, with release seq `seq`. */
void drag_blocks_create(ULong seq, ULong id, Addr addr, SizeT size);

/* Event `seq` ends the object starting at addr; an unknown address is counted and ignored. */
void drag_blocks_release(ULong seq, Addr addr);

/* The program read or wrote [addr, addr + size): every live block holding any of those bytes
 * was last used after the current seq. Called from the instrumented code (a dirty helper). */
VG_REGPARM(2) void drag_blocks_access(Addr addr, SizeT size);

/* Ends every live block with release seq `release` (the end of the run). */
void drag_blocks_end_all(ULong release);

/* Forgets every live block without ending it (a fork child, which writes nothing). */
void drag_blocks_drop_all(void);

const DragBlockStats* drag_blocks_stats(void);

#endif /* STRATA_DRAG_BLOCKS_H */
