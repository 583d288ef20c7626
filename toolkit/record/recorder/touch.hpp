// The page logic behind the recorder's Touch events: how many bytes of a large object the
// program touched. At creation the recorder hands the pages that lie wholly inside the
// object's unspecified (or zero) part back to the kernel (MADV_DONTNEED); just before the
// object ends it asks the kernel which of the object's whole pages are resident again
// (mincore). A page that is resident was touched (written or read) since; the partial pages
// at either end are shared with the allocator's headers and neighbours, so they are never
// given back and always count as touched. docs/toolkit/recording.md describes the method and its
// limits. Plain system calls only: these run inside malloc and free.
#pragma once
#include <cstddef>
#include <cstdint>

namespace strata::record {

// The whole pages lying strictly inside [begin, end): [*first, *last), page-aligned; false
// when there are none. page must be a power of two.
bool interiorPages(std::uintptr_t begin, std::uintptr_t end, std::size_t page,
                   std::uintptr_t* first, std::uintptr_t* last) noexcept;

// Gives the whole pages inside [object + from, object + to) back to the kernel
// (MADV_DONTNEED), so that they read back as zero and are not resident until touched. The
// caller guarantees that the range's contents are unspecified or must read as zero and that
// it is private anonymous memory (glibc's heap and its mmap chunks are). True when there was
// nothing to give back or madvise succeeded; false when madvise failed (the object's pages
// then say nothing about what the program touched).
bool releasePages(const void* object, std::uint64_t from, std::uint64_t to,
                  std::size_t page) noexcept;

// The bytes of the object [object, object + size) the program touched: size minus the bytes of
// its whole interior pages that are not resident, and minus the partial last page when the
// last whole page is not resident either (that page is shared with the object's neighbour). Returns kTouchUnknown when mincore fails
// (the range is no longer mapped). One mincore call per 1024 pages (its result vector is on the stack).
inline constexpr std::uint64_t kTouchUnknown = ~std::uint64_t{0};
std::uint64_t touchedBytes(const void* object, std::uint64_t size, std::size_t page) noexcept;

}  // namespace strata::record
