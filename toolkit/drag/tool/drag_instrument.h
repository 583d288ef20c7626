/* The drag tool's instrumentation: a call to drag_blocks_access before every guest memory
 * access of a superblock. */
#ifndef STRATA_DRAG_INSTRUMENT_H
#define STRATA_DRAG_INSTRUMENT_H

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"

IRSB* drag_instrument(VgCallbackClosure* closure, IRSB* sb_in, const VexGuestLayout* layout,
                      const VexGuestExtents* extents, const VexArchInfo* arch_info,
                      IRType gWordTy, IRType hWordTy);

#endif /* STRATA_DRAG_INSTRUMENT_H */
