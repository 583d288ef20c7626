// StrataTunables and tunablesFromEnvironment: the defaults, every STRATA_* variable parsed
// (sizes with K/M/G suffixes), and every kind of bad value (junk, negative, overflow, out of
// range, empty) keeping the default with exactly one line on stderr naming the variable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "strata/strata_heap/strata_tunables.hpp"

using namespace strata;

namespace {

const char* const kVariables[] = {"STRATA_PURGE_DELAY_MS", "STRATA_DIRTY_SLOTS",
                                  "STRATA_MAX_DELAYED",    "STRATA_HUGE_THRESHOLD",
                                  "STRATA_HUGE_CACHE_CHUNKS", "STRATA_HUGE_CACHE",
                                  "STRATA_SEGMENT_CACHE"};

// Clears every STRATA_* variable for the test and puts the old values back afterwards.
class Tunables : public testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kVariables) {
      const char* old = std::getenv(v);
      saved_.push_back(old ? std::optional<std::string>(old) : std::nullopt);
      ::unsetenv(v);
    }
  }
  void TearDown() override {
    for (std::size_t i = 0; i < saved_.size(); ++i) {
      if (saved_[i]) ::setenv(kVariables[i], saved_[i]->c_str(), 1);
      else ::unsetenv(kVariables[i]);
    }
  }

  // Reads the environment with name=value set; what went to stderr in `err`.
  static StrataTunables with(const char* name, const char* value, std::string& err) {
    ::setenv(name, value, 1);
    testing::internal::CaptureStderr();
    const StrataTunables t = tunablesFromEnvironment();
    err = testing::internal::GetCapturedStderr();
    ::unsetenv(name);
    return t;
  }
  static StrataTunables with(const char* name, const char* value) {
    std::string err;
    StrataTunables t = with(name, value, err);
    EXPECT_EQ(err, "") << name << "=" << value << " is valid";
    return t;
  }

 private:
  std::vector<std::optional<std::string>> saved_;
};

bool sameAsDefaults(const StrataTunables& t) {
  const StrataTunables d;
  return t.purgeDelayMs == d.purgeDelayMs && t.dirtySlots == d.dirtySlots &&
         t.maxDelayedBytes == d.maxDelayedBytes && t.hugeThreshold == d.hugeThreshold &&
         t.hugeCacheChunks == d.hugeCacheChunks && t.hugeCacheBytes == d.hugeCacheBytes &&
         t.segmentCache == d.segmentCache;
}

constexpr std::size_t KiB = 1024, MiB = KiB << 10, GiB = MiB << 10;

}  // namespace

TEST_F(Tunables, DefaultsWhenNothingIsSet) {
  const StrataTunables d;
  EXPECT_EQ(d.purgeDelayMs, 250u);
  EXPECT_EQ(d.dirtySlots, 4u);
  EXPECT_EQ(d.maxDelayedBytes, 512 * MiB);
  EXPECT_EQ(d.hugeThreshold, 0u);
  EXPECT_EQ(d.hugeCacheChunks, 16u);
  EXPECT_EQ(d.hugeCacheBytes, 128 * MiB);
  EXPECT_EQ(d.segmentCache, 128u);
  testing::internal::CaptureStderr();
  const StrataTunables t = tunablesFromEnvironment();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_TRUE(sameAsDefaults(t));
}

TEST_F(Tunables, CountsAndMilliseconds) {
  EXPECT_EQ(with("STRATA_PURGE_DELAY_MS", "0").purgeDelayMs, 0u);
  EXPECT_EQ(with("STRATA_PURGE_DELAY_MS", "1500").purgeDelayMs, 1500u);
  EXPECT_EQ(with("STRATA_PURGE_DELAY_MS", "3600000").purgeDelayMs, 3'600'000u);
  EXPECT_EQ(with("STRATA_DIRTY_SLOTS", "0").dirtySlots, 0u);
  EXPECT_EQ(with("STRATA_DIRTY_SLOTS", "4096").dirtySlots, 4096u);
  EXPECT_EQ(with("STRATA_HUGE_CACHE_CHUNKS", "0").hugeCacheChunks, 0u);
  EXPECT_EQ(with("STRATA_HUGE_CACHE_CHUNKS", "64").hugeCacheChunks, 64u);
  EXPECT_EQ(with("STRATA_SEGMENT_CACHE", "0").segmentCache, 0u);
  EXPECT_EQ(with("STRATA_SEGMENT_CACHE", "256").segmentCache, 256u);
  // One variable set leaves the others at their defaults.
  StrataTunables t = with("STRATA_SEGMENT_CACHE", "3");
  t.segmentCache = StrataTunables{}.segmentCache;
  EXPECT_TRUE(sameAsDefaults(t));
}

TEST_F(Tunables, SizesTakeSuffixes) {
  EXPECT_EQ(with("STRATA_MAX_DELAYED", "0").maxDelayedBytes, 0u);
  EXPECT_EQ(with("STRATA_MAX_DELAYED", "12345").maxDelayedBytes, 12345u);
  EXPECT_EQ(with("STRATA_MAX_DELAYED", "64k").maxDelayedBytes, 64 * KiB);
  EXPECT_EQ(with("STRATA_MAX_DELAYED", "64M").maxDelayedBytes, 64 * MiB);
  EXPECT_EQ(with("STRATA_MAX_DELAYED", "2G").maxDelayedBytes, 2 * GiB);
  EXPECT_EQ(with("STRATA_MAX_DELAYED", "3MiB").maxDelayedBytes, 3 * MiB);
  EXPECT_EQ(with("STRATA_MAX_DELAYED", "3MB").maxDelayedBytes, 3 * MiB);
  EXPECT_EQ(with("STRATA_MAX_DELAYED", "1024G").maxDelayedBytes, std::size_t{1} << 40);
  EXPECT_EQ(with("STRATA_HUGE_THRESHOLD", "128K").hugeThreshold, 128 * KiB);
  EXPECT_EQ(with("STRATA_HUGE_THRESHOLD", "1m").hugeThreshold, MiB);
  EXPECT_EQ(with("STRATA_HUGE_THRESHOLD", "1G").hugeThreshold, GiB);
  EXPECT_EQ(with("STRATA_HUGE_THRESHOLD", "262144").hugeThreshold, 256 * KiB);
  EXPECT_EQ(with("STRATA_HUGE_CACHE", "0").hugeCacheBytes, 0u);
  EXPECT_EQ(with("STRATA_HUGE_CACHE", "1G").hugeCacheBytes, GiB);
  EXPECT_EQ(with("STRATA_HUGE_CACHE", "100M").hugeCacheBytes, 100 * MiB);
}

TEST_F(Tunables, BadValuesKeepTheDefaultAndSayWhichVariable) {
  const struct {
    const char* name;
    const char* value;
  } bad[] = {
      {"STRATA_PURGE_DELAY_MS", "soon"},     {"STRATA_PURGE_DELAY_MS", "-1"},
      {"STRATA_PURGE_DELAY_MS", ""},         {"STRATA_PURGE_DELAY_MS", "3600001"},
      {"STRATA_PURGE_DELAY_MS", "10ms"},     {"STRATA_PURGE_DELAY_MS", " 10"},
      {"STRATA_PURGE_DELAY_MS", "99999999999999999999999"},
      {"STRATA_DIRTY_SLOTS", "4097"},        {"STRATA_DIRTY_SLOTS", "4K"},
      {"STRATA_DIRTY_SLOTS", "-4"},          {"STRATA_DIRTY_SLOTS", ""},
      {"STRATA_MAX_DELAYED", "1T"},          {"STRATA_MAX_DELAYED", "1025G"},
      {"STRATA_MAX_DELAYED", "18446744073709551616"}, {"STRATA_MAX_DELAYED", "99999999999G"},
      {"STRATA_MAX_DELAYED", "M"},           {"STRATA_MAX_DELAYED", "5MX"},
      {"STRATA_MAX_DELAYED", "-5M"},         {"STRATA_MAX_DELAYED", ""},
      {"STRATA_HUGE_THRESHOLD", "64K"},      {"STRATA_HUGE_THRESHOLD", "0"},
      {"STRATA_HUGE_THRESHOLD", "2G"},       {"STRATA_HUGE_THRESHOLD", "big"},
      {"STRATA_HUGE_CACHE_CHUNKS", "65"},    {"STRATA_HUGE_CACHE_CHUNKS", "1.5"},
      {"STRATA_HUGE_CACHE", "2T"},           {"STRATA_HUGE_CACHE", "0x100"},
      {"STRATA_SEGMENT_CACHE", "257"},       {"STRATA_SEGMENT_CACHE", "+1"},
      {"STRATA_SEGMENT_CACHE", ""},
  };
  for (const auto& b : bad) {
    std::string err;
    const StrataTunables t = with(b.name, b.value, err);
    EXPECT_TRUE(sameAsDefaults(t)) << b.name << "=\"" << b.value << "\"";
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_EQ(err.back(), '\n') << err;
    EXPECT_NE(err.find(std::string(b.name) + "=" + b.value + " "), std::string::npos) << err;
    EXPECT_NE(err.find("default"), std::string::npos) << err;
  }
}

TEST_F(Tunables, OneBadVariableDoesNotSpoilTheOthers) {
  ::setenv("STRATA_DIRTY_SLOTS", "9", 1);
  ::setenv("STRATA_HUGE_CACHE", "64M", 1);
  std::string err;
  const StrataTunables t = with("STRATA_SEGMENT_CACHE", "lots", err);
  EXPECT_EQ(t.dirtySlots, 9u);
  EXPECT_EQ(t.hugeCacheBytes, 64 * MiB);
  EXPECT_EQ(t.segmentCache, StrataTunables{}.segmentCache);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("STRATA_SEGMENT_CACHE"), std::string::npos);
}
