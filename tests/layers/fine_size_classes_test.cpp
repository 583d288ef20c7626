#include <gtest/gtest.h>

#include "strata/combining/fine_size_classes.hpp"

using namespace strata;

template <class C>
void checkClasses() {
  // Round trip, strictly increasing sizes, multiples of 16, smallest class that fits.
  std::size_t prev = 0;
  for (unsigned c = 0; c < C::Count; ++c) {
    const std::size_t s = C::class2size(c);
    ASSERT_GT(s, prev) << c;
    ASSERT_EQ(s % 16, 0u) << c;
    ASSERT_EQ(C::size2class(s), c) << s;
    ASSERT_EQ(C::size2class(prev + 1), c) << prev + 1;
    prev = s;
  }
  EXPECT_EQ(prev, C::MaxClassSize);
  // Spacing: 16 bytes up to Linear, then at most size / PerDoubling.
  for (std::size_t n = 1; n <= C::MaxClassSize; n += (n < 5000 ? 1 : 37)) {
    const std::size_t s = C::class2size(C::size2class(n));
    ASSERT_GE(s, n);
    if (n <= C::Linear)
      ASSERT_LT(s - n, 16u) << n;
    else
      ASSERT_LE(s - n, n / C::PerDoubling) << n;
  }
}

TEST(FineSizeClasses, EightPerDoubling) {
  using C = FineSizeClasses<3>;
  checkClasses<C>();
  EXPECT_EQ(C::size2class(0), 0u);
  EXPECT_EQ(C::class2size(C::size2class(129)), 144u);
  EXPECT_EQ(C::class2size(C::size2class(257)), 288u);
  EXPECT_EQ(C::Count, 88u);
}

TEST(FineSizeClasses, SixteenPerDoubling) {
  using C = FineSizeClasses<4>;
  checkClasses<C>();
  EXPECT_EQ(C::class2size(C::size2class(250)), 256u);
  EXPECT_EQ(C::class2size(C::size2class(257)), 272u);
  EXPECT_EQ(C::class2size(C::size2class(1000)), 1024u);
}

TEST(FineSizeClasses, FourPerDoublingSmallMax) {
  checkClasses<FineSizeClasses<2, 4096>>();
}
