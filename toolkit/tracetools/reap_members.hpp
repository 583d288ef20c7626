// ReapMembers: the ids created in each reap (objects and the reaps under it), for the passes
// that free a reap's objects at reap_clear and reap_destroy (statistics, mtrace export). A
// reap's list drops its dead ids whenever it has doubled since it last did, so a reap that
// lives long and frees its objects one by one (reap_free) holds at most about twice the ids
// live in it, not every id it ever held. Ids are never reused, so a dead id stays dead.
#pragma once
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace strata::tracetools {

class ReapMembers {
 public:
  // `id` was created in reap `reap`; `live(id)` says whether an id is live still.
  template <class Live>
  void add(std::uint64_t reap, std::uint64_t id, Live&& live) {
    List& l = lists_[reap];
    l.ids.push_back(id);
    if (l.ids.size() < l.compactAt) return;
    std::size_t kept = 0;
    for (const std::uint64_t m : l.ids)
      if (live(m)) l.ids[kept++] = m;
    l.ids.resize(kept);
    l.compactAt = 2 * kept < kMinCompact ? kMinCompact : 2 * kept;
  }
  // The ids created in `reap` (some perhaps dead), forgotten here.
  std::vector<std::uint64_t> take(std::uint64_t reap) {
    const auto it = lists_.find(reap);
    if (it == lists_.end()) return {};
    std::vector<std::uint64_t> ids = std::move(it->second.ids);
    lists_.erase(it);
    return ids;
  }

 private:
  static constexpr std::size_t kMinCompact = 64;
  struct List {
    std::vector<std::uint64_t> ids;
    std::size_t compactAt = kMinCompact;
  };
  std::unordered_map<std::uint64_t, List> lists_;
};

}  // namespace strata::tracetools
