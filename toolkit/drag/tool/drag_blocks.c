/* The drag tool's live blocks (drag_blocks.h): a WordFM of Block pointers ordered by address,
 * where overlapping ranges compare equal, so that looking up a probe range finds a live block
 * sharing a byte with it. Blocks never overlap each other: a CREATE over live bytes ends the
 * blocks there first.
 *
 * An access looks first at the block the previous one hit, then at a direct-mapped table of
 * recent answers per 16-byte granule of the address space (the block holding the granule's
 * accesses, or "no block touches this granule"), and only then in the tree, whose lookups
 * (pointer chasing over every live block) would otherwise be most of the tool's time when a
 * program walks many objects. A block's granules are cleared from the table when it is
 * created and when it ends, so an entry is never stale. */
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

/* The table of recent answers: 2^16 entries of 16-byte granules, so a contiguous megabyte of
 * objects maps without collisions. An entry is for granule `granule`; block NULL means no live
 * block shares a byte with it. */
#define GRANULE_SHIFT 4
#define RECENT_BITS 16
#define RECENT_SIZE ((UWord)1 << RECENT_BITS)
typedef struct {
   Addr granule;
   Block* block;
} Recent;
static Recent recent[RECENT_SIZE];

static Recent* recent_slot(Addr granule) { return &recent[granule & (RECENT_SIZE - 1)]; }

static void clear_recent(void)
{
   UWord i;
   for (i = 0; i < RECENT_SIZE; i++) recent[i].granule = ~(Addr)0;  /* matches no granule */
}

/* Forgets what the table knows of the granules of [lo, hi). */
static void forget_recent(Addr lo, Addr hi)
{
   Addr first = lo >> GRANULE_SHIFT, last = (hi - 1) >> GRANULE_SHIFT, g;
   if (last - first >= RECENT_SIZE) {
      UWord i;
      for (i = 0; i < RECENT_SIZE; i++)
         if (recent[i].granule >= first && recent[i].granule <= last)
            recent[i].granule = ~(Addr)0;
      return;
   }
   for (g = first; g <= last; g++) {
      Recent* r = recent_slot(g);
      if (r->granule == g) r->granule = ~(Addr)0;
   }
}

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
   clear_recent();
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
   forget_recent(b->lo, b->hi);
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
   forget_recent(addr, hi);
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
      if (b->lo <= lo) {
         Recent* r = recent_slot(lo >> GRANULE_SHIFT);
         r->granule = lo >> GRANULE_SHIFT;
         r->block = b;
      }
      if (lo < b->lo) touch_range(lo, b->lo);
      lo = b->hi;
   }
}

VG_REGPARM(2) void drag_blocks_access(Addr addr, SizeT size)
{
   Addr hi, granule;
   Block* b;
   Recent* r;
   if (addr >= bounds_hi) return;
   hi = end_of(addr, size);
   if (hi <= bounds_lo) return;
   b = last_hit;
   if (b != NULL && addr >= b->lo && hi <= b->hi) {
      b->last_use = current_seq;
      return;
   }
   granule = addr >> GRANULE_SHIFT;
   r = recent_slot(granule);
   if (r->granule == granule) {
      b = r->block;
      if (b == NULL) {
         if ((hi - 1) >> GRANULE_SHIFT == granule) return;  /* no block in its granule */
      } else if (addr >= b->lo && hi <= b->hi) {
         b->last_use = current_seq;
         last_hit = b;
         return;
      }
   } else if ((hi - 1) >> GRANULE_SHIFT == granule) {
      Addr start = granule << GRANULE_SHIFT;
      if (find_overlap(start, start + ((Addr)1 << GRANULE_SHIFT)) == NULL) {
         r->granule = granule;  /* learnt: nothing lives in this granule */
         r->block = NULL;
         return;
      }
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
