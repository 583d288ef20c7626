/* The drag tool's instrumentation (drag_instrument.h), after Lackey's memory tracing: each
 * load (a WrTmp of a Load, a guarded LoadG), store (Store, guarded StoreG), compare-and-swap,
 * load-linked / store-conditional and dirty helper with a memory effect gets, just before it,
 * a call drag_blocks_access(address, size), under the same guard for guarded accesses. Where
 * in the superblock the call sits does not matter: the current seq changes only at a client
 * request, which ends a superblock. */
#include "drag_instrument.h"

#include "pub_tool_libcassert.h"
#include "pub_tool_machine.h"

#include "drag_blocks.h"

/* Adds the call for an access of `size` bytes at `addr` (an IR atom), made when `guard` (an
 * Ity_I1 atom, or NULL: always) holds. */
static void add_access(IRSB* sb, IRExpr* addr, Int size, IRExpr* guard)
{
   IRExpr** args = mkIRExprVec_2(addr, mkIRExpr_HWord((HWord)size));
   IRDirty* di = unsafeIRDirty_0_N(2, "drag_blocks_access",
                                   VG_(fnptr_to_fnentry)(drag_blocks_access), args);
   tl_assert(isIRAtom(addr));
   if (guard != NULL) di->guard = guard;
   addStmtToIRSB(sb, IRStmt_Dirty(di));
}

static Int size_of_expr(const IRTypeEnv* env, const IRExpr* e)
{
   return sizeofIRType(typeOfIRExpr(env, e));
}

/* The accesses statement st makes, as calls added to sb. */
static void add_accesses_of(IRSB* sb, const IRStmt* st)
{
   const IRTypeEnv* env = sb->tyenv;
   switch (st->tag) {
   case Ist_WrTmp: {
      const IRExpr* data = st->Ist.WrTmp.data;
      if (data->tag == Iex_Load)
         add_access(sb, data->Iex.Load.addr, sizeofIRType(data->Iex.Load.ty), NULL);
      break;
   }
   case Ist_Store:
      add_access(sb, st->Ist.Store.addr, size_of_expr(env, st->Ist.Store.data), NULL);
      break;
   case Ist_StoreG: {
      const IRStoreG* sg = st->Ist.StoreG.details;
      add_access(sb, sg->addr, size_of_expr(env, sg->data), sg->guard);
      break;
   }
   case Ist_LoadG: {
      const IRLoadG* lg = st->Ist.LoadG.details;
      IRType loaded = Ity_INVALID, widened = Ity_INVALID;
      typeOfIRLoadGOp(lg->cvt, &widened, &loaded);
      tl_assert(loaded != Ity_INVALID);
      add_access(sb, lg->addr, sizeofIRType(loaded), lg->guard);
      break;
   }
   case Ist_CAS: {
      const IRCAS* cas = st->Ist.CAS.details;
      Int size = size_of_expr(env, cas->dataLo);
      if (cas->dataHi != NULL) size *= 2;  /* a double-word CAS */
      add_access(sb, cas->addr, size, NULL);
      break;
   }
   case Ist_LLSC: {
      const IRExpr* stored = st->Ist.LLSC.storedata;
      Int size = stored == NULL ? sizeofIRType(typeOfIRTemp(env, st->Ist.LLSC.result))
                                : size_of_expr(env, stored);
      add_access(sb, st->Ist.LLSC.addr, size, NULL);
      break;
   }
   case Ist_Dirty: {
      const IRDirty* d = st->Ist.Dirty.details;
      if (d->mFx != Ifx_None) {
         IRExpr* guard = d->guard;
         /* A constant-true guard is no guard. */
         if (guard->tag == Iex_Const && guard->Iex.Const.con->Ico.U1) guard = NULL;
         add_access(sb, d->mAddr, d->mSize, guard);
      }
      break;
   }
   default:
      break;
   }
}

IRSB* drag_instrument(VgCallbackClosure* closure, IRSB* sb_in, const VexGuestLayout* layout,
                      const VexGuestExtents* extents, const VexArchInfo* arch_info,
                      IRType gWordTy, IRType hWordTy)
{
   IRSB* sb;
   Int i;
   (void)closure;
   (void)layout;
   (void)extents;
   (void)arch_info;
   if (gWordTy != hWordTy) VG_(tool_panic)("strata-drag: host and guest word sizes differ");

   sb = deepCopyIRSBExceptStmts(sb_in);
   for (i = 0; i < sb_in->stmts_used; i++) {
      IRStmt* st = sb_in->stmts[i];
      if (st == NULL || st->tag == Ist_NoOp) continue;
      add_accesses_of(sb, st);
      addStmtToIRSB(sb, st);
   }
   return sb;
}
