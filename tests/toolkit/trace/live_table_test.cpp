// LiveTable (strata/trace/live_table.hpp): randomised against std::unordered_map over
// long runs of births and deaths, dense increasing ids as a trace gives them, with lookups of
// dead and never-seen ids, half the deaths erased where find() found them; and its memory
// follows the live count, not the ids ever inserted.
// links: strata_trace
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "strata/trace/live_table.hpp"

namespace {

using strata::trace::LiveTable;

struct Value {
  std::uint64_t a = 0, b = 0;
};

TEST(LiveTable, MatchesAnUnorderedMapOverRandomBirthsAndDeaths) {
  for (const std::size_t live : {1u, 7u, 64u, 1000u, 20000u}) {
    std::mt19937_64 rng(live);
    LiveTable<Value> table;
    std::unordered_map<std::uint64_t, Value> model;
    std::vector<std::uint64_t> ids;
    std::uint64_t next = 0;
    for (int step = 0; step < 200000; ++step) {
      const auto r = rng() % 8;
      if (ids.size() < live && r < 5) {  // a birth
        const std::uint64_t id = next++;
        table[id] = Value{id, id * 3};
        model[id] = Value{id, id * 3};
        ids.push_back(id);
      } else if (!ids.empty() && r < 7) {  // a death
        const std::size_t k = rng() % ids.size();
        const std::uint64_t id = ids[k];
        ids[k] = ids.back();
        ids.pop_back();
        if (rng() % 2 == 0) {
          ASSERT_TRUE(table.erase(id));
        } else {
          const Value* found = table.find(id);
          ASSERT_NE(found, nullptr);
          table.eraseFound(found);
        }
        model.erase(id);
        ASSERT_FALSE(table.erase(id)) << "a second erase finds nothing";
      } else {  // a lookup of any id seen, or one never seen
        const std::uint64_t id = rng() % (next + 10);
        const Value* got = table.find(id);
        const auto want = model.find(id);
        ASSERT_EQ(got != nullptr, want != model.end()) << "id " << id;
        if (got != nullptr) {
          ASSERT_EQ(got->a, want->second.a);
          ASSERT_EQ(got->b, want->second.b);
        }
      }
      ASSERT_EQ(table.size(), model.size());
    }
    for (const auto& [id, v] : model) {
      const Value* got = table.find(id);
      ASSERT_NE(got, nullptr) << "id " << id;
      EXPECT_EQ(got->b, v.b);
    }
  }
}

TEST(LiveTable, MemoryFollowsTheLiveCountNotTheIdsEverInserted) {
  LiveTable<Value> table;
  constexpr std::uint64_t kLive = 4096;
  for (std::uint64_t id = 0; id < kLive; ++id) table[id] = Value{id, 0};
  const std::size_t afterFill = table.capacityBytes();
  // Ten million more ids, each replacing the oldest: the live count stays 4,096.
  for (std::uint64_t id = kLive; id < 10'000'000; ++id) {
    ASSERT_TRUE(table.erase(id - kLive));
    table[id] = Value{id, 0};
  }
  EXPECT_EQ(table.size(), kLive);
  EXPECT_EQ(table.capacityBytes(), afterFill);
  EXPECT_LE(afterFill, 4 * kLive * (sizeof(std::uint64_t) + sizeof(Value)));
  for (std::uint64_t id = 10'000'000 - kLive; id < 10'000'000; ++id)
    ASSERT_NE(table.find(id), nullptr);
  EXPECT_EQ(table.find(0), nullptr);
}

}  // namespace
