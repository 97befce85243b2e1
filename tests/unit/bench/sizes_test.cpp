// Size sweep: parsing with nccl-tests' suffixes, geometric and arithmetic steps, lists.
#include <gtest/gtest.h>

#include "bench/sizes.hpp"
#include "core/error.hpp"

using namespace fabscope::bench;

TEST(Sizes, SuffixesArePowersOf1024) {
  EXPECT_EQ(parse_size("8"), 8u);
  EXPECT_EQ(parse_size("64K"), 65536u);
  EXPECT_EQ(parse_size("1M"), 1048576u);
  EXPECT_EQ(parse_size("4G"), 4294967296ull);
  EXPECT_EQ(parse_size("2GiB"), 2147483648ull);
  EXPECT_EQ(parse_size("512b"), 512u);
  EXPECT_EQ(parse_size("1t"), 1ull << 40);
}

TEST(Sizes, GarbageAndOverflowAreRejected) {
  EXPECT_FALSE(parse_size("").has_value());
  EXPECT_FALSE(parse_size("M").has_value());
  EXPECT_FALSE(parse_size("1.5M").has_value());
  EXPECT_FALSE(parse_size("-8").has_value());
  EXPECT_FALSE(parse_size("8X").has_value());
  EXPECT_FALSE(parse_size("99999999999999999999").has_value());
  EXPECT_FALSE(parse_size("17179869184G").has_value());
}

TEST(Sizes, FullSweep8BTo4GByFactor2HasThirtySizes) {
  SweepSpec s;
  s.min_bytes = 8;
  s.max_bytes = 4ull << 30;
  auto v = sweep_sizes(s);
  ASSERT_EQ(v.size(), 30u);
  EXPECT_EQ(v.front(), 8u);
  EXPECT_EQ(v[1], 16u);
  EXPECT_EQ(v.back(), 4ull << 30);
}

TEST(Sizes, MaxNotOnTheStepIsNotExceeded) {
  SweepSpec s;
  s.min_bytes = 8;
  s.max_bytes = 100;
  s.step_factor = 4;
  EXPECT_EQ(sweep_sizes(s), (std::vector<std::uint64_t>{8, 32}));
}

TEST(Sizes, ArithmeticStep) {
  SweepSpec s;
  s.min_bytes = 1024;
  s.max_bytes = 4096;
  s.step_bytes = 1024;
  EXPECT_EQ(sweep_sizes(s), (std::vector<std::uint64_t>{1024, 2048, 3072, 4096}));
}

TEST(Sizes, FractionalFactorFromOneStillAdvances) {
  SweepSpec s;
  s.min_bytes = 1;
  s.max_bytes = 4;
  s.step_factor = 1.5;
  EXPECT_EQ(sweep_sizes(s), (std::vector<std::uint64_t>{1, 2, 3, 4}));
}

TEST(Sizes, SingleSizeWhenMinEqualsMax) {
  SweepSpec s;
  s.min_bytes = s.max_bytes = 1ull << 30;
  EXPECT_EQ(sweep_sizes(s).size(), 1u);
}

TEST(Sizes, ListIsSortedAndDeduplicated) {
  SweepSpec s;
  s.list = parse_size_list("1G,8,1M,8");
  EXPECT_EQ(sweep_sizes(s), (std::vector<std::uint64_t>{8, 1048576, 1073741824}));
}

TEST(Sizes, BadListElementIsNamed) {
  try {
    parse_size_list("8,abc,1M");
    FAIL();
  } catch (const fabscope::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'abc'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_size_list("8,,1M"), fabscope::UsageError);
}

TEST(Sizes, MessagesNameTheCommandThatParsed) {
  try {
    parse_size_list("8,abc", "tune");
    FAIL();
  } catch (const fabscope::UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("tune: --sizes: 'abc'", 0), 0u) << e.what();
  }
  SweepSpec s;
  s.min_bytes = 1024;
  s.max_bytes = 8;
  try {
    sweep_sizes(s, "tune");
    FAIL();
  } catch (const fabscope::UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("tune: minimum size", 0), 0u) << e.what();
  }
}

TEST(Sizes, MinAboveMaxIsAUsageError) {
  SweepSpec s;
  s.min_bytes = 1024;
  s.max_bytes = 8;
  EXPECT_THROW(sweep_sizes(s), fabscope::UsageError);
}

TEST(Sizes, RunawaySweepIsRefused) {
  SweepSpec s;
  s.min_bytes = 1;
  s.max_bytes = 1ull << 40;
  s.step_bytes = 1;
  EXPECT_THROW(sweep_sizes(s), fabscope::UsageError);
}

TEST(Sizes, Labels) {
  EXPECT_EQ(size_label(8), "8 B");
  EXPECT_EQ(size_label(1048576), "1 MiB");
  EXPECT_EQ(size_label(1536), "1.5 KiB");
  EXPECT_EQ(size_label(4ull << 30), "4 GiB");
}
