// SpanArena: the page map of one arena of large objects, cut into runs of 4 KiB pages that
// split and join (tcmalloc's page heap, Lea's boundary tags kept out of line), and SpanBins:
// the free runs of every arena, filed by length for best fit.
//
// An arena is ArenaBytes of address space aligned to its size. Its first pages hold the
// header: the chunk header the source keeps, a kind word, and one Node per page. Every page
// after the header belongs to exactly one run; a run's first page's node holds its length
// and state (used, free and possibly resident, free and reading as zero), its last page's
// node the index of its first page, so a freed run finds both neighbours in two loads and
// joins them. Interior pages' nodes say "interior", so a pointer into the middle of an
// object, or a second free, is recognised and ignored. Nodes live in the header, never in
// the free pages themselves: a free run given back to the system stays untouched.
//
// No system calls and no locking here; LargeSpanHeap holds the lock and does the books.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>

namespace strata {

inline constexpr std::size_t kSpanPageShift = 12;
inline constexpr std::size_t kSpanPageBytes = std::size_t{1} << kSpanPageShift;

template <std::size_t ArenaBytes, std::size_t ChunkHeaderBytes>
class SpanArena {
 public:
  static constexpr std::size_t Pages = ArenaBytes >> kSpanPageShift;
  static_assert(std::has_single_bit(ArenaBytes) && Pages <= (std::size_t{1} << 31));

  enum State : std::uint8_t { kInterior = 0, kUsed = 1, kDirty = 2, kClean = 3 };

  struct Node {
    Node* next;
    Node* prev;
    std::uint32_t len;    // at a run's first page: its pages
    std::uint32_t first;  // at a run's last page: its first page
    State state;          // at a run's first page; kInterior elsewhere
  };

  struct Header {
    std::size_t chunkHeader[ChunkHeaderBytes / sizeof(std::size_t)];
    std::uintptr_t kind;
    std::size_t freePages;  // pages in free runs
    Node nodes[Pages];
  };
  static constexpr std::size_t HeaderPages = (sizeof(Header) + kSpanPageBytes - 1) >> kSpanPageShift;
  static constexpr std::size_t UsablePages = Pages - HeaderPages;
  static constexpr std::size_t NodeBytes = sizeof(Node) * Pages;

  static std::uintptr_t addr(const void* p) noexcept { return reinterpret_cast<std::uintptr_t>(p); }
  static Header* arenaOf(const Node* n) noexcept {
    return reinterpret_cast<Header*>(addr(n) & ~(ArenaBytes - 1));
  }
  static std::size_t indexOf(const Node* n) noexcept { return static_cast<std::size_t>(n - arenaOf(n)->nodes); }
  static std::byte* pageAddress(const Node* n) noexcept {
    return reinterpret_cast<std::byte*>(arenaOf(n)) + (indexOf(n) << kSpanPageShift);
  }

  // A fresh arena in `chunk` whose nodes read as zero: one clean free run of every page.
  static Node* init(void* chunk, std::uintptr_t kind) noexcept {
    auto* a = static_cast<Header*>(chunk);
    a->kind = kind;
    a->freePages = UsablePages;
    Node* run = &a->nodes[HeaderPages];
    setRun(run, UsablePages, kClean);
    return run;
  }

  // The used run starting at p, or nullptr when p is not the start of an object here.
  static Node* usedRunAt(Header* a, const void* p) noexcept {
    const std::uintptr_t off = addr(p) - addr(a);
    if ((off & (kSpanPageBytes - 1)) != 0) return nullptr;
    const std::size_t i = off >> kSpanPageShift;
    if (i < HeaderPages || i >= Pages || a->nodes[i].state != kUsed) return nullptr;
    return &a->nodes[i];
  }

  // Marks n pages from `run` on as one run in state s.
  static void setRun(Node* run, std::size_t n, State s) noexcept {
    run->len = static_cast<std::uint32_t>(n);
    run->state = s;
    run->first = static_cast<std::uint32_t>(indexOf(run));
    run[n - 1].first = run->first;
  }

  // The run after `run` (nullptr at the arena's end) and before it (nullptr at the start).
  static Node* nextRun(Node* run) noexcept {
    const std::size_t j = indexOf(run) + run->len;
    return j < Pages ? run + run->len : nullptr;
  }
  static Node* prevRun(Node* run) noexcept {
    const std::size_t i = indexOf(run);
    return i > HeaderPages ? &arenaOf(run)->nodes[run[-1].first] : nullptr;
  }
  static bool isFree(const Node* run) noexcept { return run->state >= kDirty; }
};

// Free runs filed by length: one list per length up to 256 pages, then eight lists per
// doubling; a bit per non-empty list finds the next candidate in a few instructions.
// Within a list, runs that may be resident come first, so a reuse faults in no pages
// when it can avoid it.
template <class Arena>
class SpanBins {
 public:
  using Node = typename Arena::Node;
  static constexpr std::size_t kExact = 256;
  static constexpr std::size_t Bins = kExact + 8 * (std::bit_width(Arena::Pages) - 8);

  static std::size_t binOf(std::size_t pages) noexcept {
    if (pages <= kExact) return pages - 1;
    const auto e = static_cast<std::size_t>(std::bit_width(pages) - 1);  // >= 8
    return kExact + (e - 8) * 8 + ((pages >> (e - 3)) & 7);
  }

  void insert(Node* run) noexcept {
    const std::size_t b = binOf(run->len);
    Node*& head = heads_[b];
    if (head == nullptr || run->state == Arena::kDirty) {
      run->prev = nullptr;
      run->next = head;
      if (head != nullptr) head->prev = run;
      head = run;
    } else {  // clean runs after the first: a short walk is not worth it, second place will do
      run->prev = head;
      run->next = head->next;
      if (head->next != nullptr) head->next->prev = run;
      head->next = run;
    }
    mask_[b / 64] |= std::uint64_t{1} << (b % 64);
  }

  void remove(Node* run) noexcept {
    const std::size_t b = binOf(run->len);
    if (run->prev != nullptr) run->prev->next = run->next;
    else heads_[b] = run->next;
    if (run->next != nullptr) run->next->prev = run->prev;
    if (heads_[b] == nullptr) mask_[b / 64] &= ~(std::uint64_t{1} << (b % 64));
  }

  // The best-fitting free run of at least n pages (the shortest of a few looked at in the
  // first list that may hold one), taken off its list; nullptr when none.
  Node* take(std::size_t n) noexcept {
    constexpr int kLooks = 16;
    for (std::size_t b = nextBin(binOf(n)); b < Bins; b = nextBin(b + 1)) {
      Node* best = nullptr;
      int looks = 0;
      for (Node* r = heads_[b]; r != nullptr && looks < kLooks; r = r->next, ++looks) {
        if (r->len >= n && (best == nullptr || r->len < best->len)) best = r;
        if (best != nullptr && best->len == n) break;
      }
      if (best != nullptr) {
        remove(best);
        return best;
      }
    }
    return nullptr;
  }

  // Calls f(run) for free runs from the longest list down while f returns true.
  template <class F>
  void forEachLongestFirst(F&& f) noexcept {
    for (std::size_t b = Bins; b-- > 0;) {
      for (Node* r = heads_[b]; r != nullptr;) {
        Node* next = r->next;
        if (!f(r)) return;
        r = next;
      }
    }
  }

 private:
  static constexpr std::size_t Words = (Bins + 63) / 64;

  // The first non-empty list at or after b (Bins when none).
  std::size_t nextBin(std::size_t b) const noexcept {
    for (std::size_t w = b / 64; w < Words; ++w) {
      std::uint64_t m = mask_[w];
      if (w == b / 64) m &= ~std::uint64_t{0} << (b % 64);
      if (m != 0) return w * 64 + static_cast<std::size_t>(std::countr_zero(m));
    }
    return Bins;
  }

  Node* heads_[Bins] = {};
  std::uint64_t mask_[Words] = {};
};

}  // namespace strata
