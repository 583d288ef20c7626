// ObjectMap's out-of-line members (object_map.hpp): set-up and the plain erase, which only
// the reap paths use (a release takes its entry with take()).
#include "record/recorder/object_map.hpp"

namespace strata::record {

bool ObjectMap::init(size_t slots) { return main_.init(slots) && side_.init(64); }

void ObjectMap::erase(uintptr_t addr) {
  Packed* s = main_.find(addr);
  if (s == nullptr) return;
  if (s->value == kRare) side_.erase(addr);
  main_.erase(s);
}

}  // namespace strata::record
