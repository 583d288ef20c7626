// A size-class page reads and writes its free blocks' links through a Links policy: a type
// without next, setNext, prepare and kBytes is rejected, naming FreeBlockLinks.
// expect: satisfaction of .+FreeBlockLinks<LinksT>.+with LinksT = LinksWithoutACheck
// expect: |constraints not satisfied for class template .+SizeClassPageOf.+with LinksT =
// expect:  LinksWithoutACheck
#include "strata/building/size_class_page.hpp"
#include "strata/hardening/encoded_links.hpp"

struct LinksWithoutACheck {
  static void* next(const void* b) noexcept { return *static_cast<void* const*>(b); }
};

#ifdef STRATA_CONTROL
using Links = strata::EncodedLinks;
#else
using Links = LinksWithoutACheck;
#endif

int main() {
  alignas(16) static std::byte area[4096];
  strata::SizeClassPageOf<Links> page;
  page.init(area, sizeof area, 64, 3);
  page.extend();
  page.pushLocal(page.pop());
  return 0;
}
