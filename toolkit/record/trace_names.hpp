// The names of the traces one recording writes: FILE for the process the recording names its
// owner (strata/record/environment.hpp, kOwnerPid) and FILE.<pid> for every other process.
// `strata record`, `strata drag` and `strata compare` look them up alike.
#pragma once
#include <string>
#include <vector>

namespace strata::record {

// The FILE.<pid> traces beside `trace`, in pid order.
std::vector<std::string> childTraces(const std::string& trace);

// The pid at the end of "<trace>.<pid>", or 0.
long pidSuffix(const std::string& path);

}  // namespace strata::record
