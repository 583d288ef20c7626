/* The drag tool's live blocks (drag_blocks.h): a WordFM of Block pointers ordered by address,
 * where overlapping ranges compare equal, so that looking up a probe range finds a live block
 * sharing a byte with it. Blocks never overlap each other: a CREATE over live bytes ends the
 * blocks there first. */
#include "drag_blocks.h"

#include "pub_tool_libcassert.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_wordfm.h"

typedef struct {
   Addr lo, hi;  /* the object's bytes: [lo, hi) */
   ULong id;
   ULong last_use;
} Block;

static WordFM* live;          /* Block* -> unused */
static UWord live_count;
static Block* last_hit;       /* the block the latest access fell in, or NULL */
static Addr bounds_lo, bounds_hi;  /* every live block lies in [bounds_lo, bounds_hi) */
static ULong current_seq;
static DragEnded on_end;
static DragBlockStats stats;

static Word compare_ranges(UWord a, UWord b)
{
   const Block* x = (const Block*)a;
   const Block* y = (const Block*)b;
   if (x->hi <= y->lo) return -1;
   if (y->hi <= x->lo) return 1;
   return 0;
}

static void free_block(UWord b) { VG_(free)((void*)b); }

static void reset_bounds(void)
{
   bounds_lo = ~(Addr)0;
   bounds_hi = 0;
}

static void new_set(void)
{
   live = VG_(newFM)(VG_(malloc), "drag.blocks.set", VG_(free), compare_ranges);
   live_count = 0;
   last_hit = NULL;
   reset_bounds();
}

void drag_blocks_init(DragEnded ended)
{
   on_end = ended;
   new_set();
}

void drag_blocks_set_seq(ULong seq)
{
   if (seq < current_seq) {
      stats.out_of_order++;
      return;
   }
   current_seq = seq;
}

/* The live block sharing a byte with [lo, hi), if any (any one of them when several do). */
static Block* find_overlap(Addr lo, Addr hi)
{
   Block probe = { lo, hi, 0, 0 };
   UWord key, value;
   if (!VG_(lookupFM)(live, &key, &value, (UWord)&probe)) return NULL;
   return (Block*)key;
}

/* Takes b out of the set and reports its end. */
static void end_block(Block* b, ULong release)
{
   Bool found = VG_(delFromFM)(live, NULL, NULL, (UWord)b);
   tl_assert(found);
   if (last_hit == b) last_hit = NULL;
   if (--live_count == 0) reset_bounds();
   on_end(b->id, b->last_use, release);
   VG_(free)(b);
}

static Addr end_of(Addr addr, SizeT size)
{
   Addr end = addr + size;
   return end < addr ? ~(Addr)0 : end;  /* a range reaching the top of the address space */
}

void drag_blocks_create(ULong seq, ULong id, Addr addr, SizeT size)
{
   Block* b;
   Addr hi = end_of(addr, size == 0 ? 1 : size);
   while ((b = find_overlap(addr, hi)) != NULL) {
      stats.displaced++;
      end_block(b, seq);
   }
   b = VG_(malloc)("drag.blocks.block", sizeof *b);
   b->lo = addr;
   b->hi = hi;
   b->id = id;
   b->last_use = seq;
   VG_(addToFM)(live, (UWord)b, 0);
   live_count++;
   if (addr < bounds_lo) bounds_lo = addr;
   if (hi > bounds_hi) bounds_hi = hi;
   stats.created++;
}

void drag_blocks_release(ULong seq, Addr addr)
{
   Block* b = find_overlap(addr, end_of(addr, 1));
   if (b == NULL || b->lo != addr) {
      stats.unknown_releases++;
      return;
   }
   stats.released++;
   end_block(b, seq);
}

/* Marks every live block sharing a byte with [lo, hi). A block found splits the rest of the
 * range into the part below it and the part above it; an access rarely spans more than two. */
static void touch_range(Addr lo, Addr hi)
{
   while (lo < hi) {
      Block* b = find_overlap(lo, hi);
      if (b == NULL) return;
      b->last_use = current_seq;
      last_hit = b;
      if (lo < b->lo) touch_range(lo, b->lo);
      lo = b->hi;
   }
}

VG_REGPARM(2) void drag_blocks_access(Addr addr, SizeT size)
{
   Addr hi;
   Block* b;
   if (addr >= bounds_hi) return;
   hi = end_of(addr, size);
   if (hi <= bounds_lo) return;
   b = last_hit;
   if (b != NULL && addr >= b->lo && hi <= b->hi) {
      b->last_use = current_seq;
      return;
   }
   touch_range(addr, hi);
}

void drag_blocks_end_all(ULong release)
{
   UWord key, value;
   VG_(initIterFM)(live);
   while (VG_(nextIterFM)(live, &key, &value)) {
      const Block* b = (const Block*)key;
      on_end(b->id, b->last_use, release);
   }
   VG_(doneIterFM)(live);
   drag_blocks_drop_all();
}

void drag_blocks_drop_all(void)
{
   VG_(deleteFM)(live, free_block, NULL);
   new_set();
}

const DragBlockStats* drag_blocks_stats(void) { return &stats; }
