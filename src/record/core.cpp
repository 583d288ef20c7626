// The recorder's shared state (core.hpp).
#include "core.hpp"

namespace strata::record {

constinit Core gCore;
STRATA_TLS int tGuard = 0;
STRATA_TLS bool tHoldsLock = false;
STRATA_TLS uint32_t tThread = 0;
STRATA_TLS uint32_t tThreadGen = 0;

}  // namespace strata::record
