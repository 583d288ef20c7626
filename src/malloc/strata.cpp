// libstrata.so: malloc over strata::StrataHeap (strata/general/strata_heap.hpp).
#include "strata/general/strata_heap.hpp"
#include "strata/shim/malloc_shim.hpp"
using StrataShim = strata::MallocShim<strata::StrataHeap>;
STRATA_DEFINE_MALLOC(StrataShim);
