// The recorder's own memory, straight from the kernel: it never comes from the malloc the
// recorder records (a call into it from inside the recorder would recurse, and would put the
// recorder's allocations into the trace).
#pragma once
#include <cstddef>

namespace strata::record {

// Anonymous private pages of `bytes` (rounded up to pages by the kernel); nullptr on failure.
// Freed with platform::unmap(p, bytes).
void* mapPages(std::size_t bytes) noexcept;

// Memory for a hash table: mapPages, but 2 MiB-aligned and marked MADV_HUGEPAGE when it is
// that large, because lookups land at random in a table that grows with the live objects,
// and with 4 KiB pages nearly every one of them also misses the TLB (very costly under a
// hypervisor's nested paging). nullptr on failure; freed with platform::unmap(p, bytes).
void* mapTable(std::size_t bytes) noexcept;

}  // namespace strata::record
