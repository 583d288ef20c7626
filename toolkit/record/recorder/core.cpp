// The recorder's shared state (core.hpp).
#include "record/recorder/core.hpp"

namespace strata::record {

constinit Core gCore;
constinit STRATA_TLS int tGuard = 0;
constinit STRATA_TLS bool tHoldsLock = false;
constinit STRATA_TLS uint32_t tThread = 0;
constinit STRATA_TLS uint32_t tThreadGen = 0;

}  // namespace strata::record
