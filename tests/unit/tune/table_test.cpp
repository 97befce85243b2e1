// The tuner table fabscope writes: rows from verified sizes, and the round trip through the
// plugin's own reader.
#include <gtest/gtest.h>

#include <random>

#include "core/error.hpp"
#include "table.h"  // plugins/nccl-tuner: the reader and match rule NCCL's process uses
#include "tune/table.hpp"

namespace fabscope::tune {
namespace {

using bench::Collective;

SizeOutcome size(std::uint64_t bytes, Choice written) {
  SizeOutcome s;
  s.bytes = bytes;
  s.written = written;
  return s;
}

TuneResult result(std::vector<SizeOutcome> sizes) {
  TuneResult r;
  r.nranks = 8;
  r.nnodes = 1;
  CollectiveOutcome co;
  co.collective = Collective::AllReduce;
  co.sizes = std::move(sizes);
  r.collectives.push_back(co);
  return r;
}

const Choice kRing32{1, 2, 32};
const Choice kRingLL{1, 0, -1};

TEST(TableRows, DefaultSizesGetNoRowAndNeighboursMerge) {
  auto r = result({size(1024, kRingLL), size(4096, kRingLL), size(16384, kNcclDefault),
                   size(65536, kRing32), size(262144, kRing32)});
  auto rows = table_rows(r);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (TableRow{Collective::AllReduce, 1024, 8192, kRingLL, 1, 8}));
  // 16384..65536: geometric midpoint 32768; the row starts above it and ends at the last size.
  EXPECT_EQ(rows[1], (TableRow{Collective::AllReduce, 32769, 262144, kRing32, 1, 8}));
}

TEST(TableRows, NoRowsWhenTheDefaultWonEverywhere) {
  EXPECT_TRUE(table_rows(result({size(1024, kNcclDefault), size(4096, kNcclDefault)})).empty());
}

TEST(TableText, RoundTripsThroughThePluginReader) {
  auto rows = table_rows(result({size(1024, kRingLL), size(4096, Choice{0, 1, 8}), size(1ull << 30, kRing32)}));
  std::string text = render_table(rows, {"written by a test"});
  EXPECT_EQ(text.rfind("# written by a test\n", 0), 0u);
  EXPECT_EQ(parse_table(text, "t.csv"), rows);
}

TEST(TableText, NvidiaExampleRowsParse) {
  // The layout of ext-tuner/example/nccl_tuner.conf: 8 and 10 fields, comments.
  auto rows = parse_table("# c\nallreduce,0,65536,tree,simple,2,1,-1,-1,1\nbroadcast,0,32768,ring,ll128,-1,1,-1\n", "x");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].collective, Collective::Broadcast);
  EXPECT_EQ(rows[1].choice, (Choice{1, 1, -1}));
}

TEST(TableText, BadLineIsAnErrorNamingFileAndLine) {
  try {
    parse_table("allreduce,0,1,ring,simple,2,-1,-1\nallreduce,0,1,ring,warp,2,-1,-1\n", "my.csv");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("my.csv:2: unknown protocol"), std::string::npos) << e.what();
  }
}

TEST(TableText, ChannelOnlyChoiceCannotBeWritten) {
  std::vector<TableRow> rows{{Collective::AllReduce, 0, 1, Choice{-1, -1, 8}, 1, 8}};
  EXPECT_THROW(render_table(rows, {}), Error);
}

// What a simulated worker applies is what the plugin applies inside NCCL: table_choice against
// the plugin's own fst_match on random tables and calls (overlapping rows, wildcards, shapes).
TEST(TableChoice, AgreesWithThePluginsMatchRule) {
  std::mt19937_64 rng(17);
  const Collective colls[] = {Collective::AllReduce, Collective::AllGather, Collective::Broadcast};
  const int funcs[] = {4, 2, 0};
  int matched = 0, unmatched = 0;
  for (int table = 0; table < 50; ++table) {
    std::vector<TableRow> rows;
    for (int i = 0; i < 6; ++i) {
      const std::uint64_t lo = 1ull << (rng() % 30);
      rows.push_back({colls[rng() % 3], lo, lo << (rng() % 6), Choice{static_cast<int>(rng() % 2), static_cast<int>(rng() % 3),
                                                                     rng() % 2 ? -1 : static_cast<int>(1 + rng() % 32)},
                      rng() % 3 ? -1 : static_cast<int>(1 + rng() % 2), rng() % 3 ? -1 : static_cast<int>(2 << (rng() % 3))});
    }
    const std::string text = render_table(rows, {"random"});
    fst_table t;
    ASSERT_EQ(fst_parse_text(text.data(), text.size(), &t, nullptr, nullptr), 0);
    ASSERT_EQ(t.count, rows.size());
    for (int call = 0; call < 200; ++call) {
      const int k = static_cast<int>(rng() % 3);
      const std::uint64_t bytes = (1ull << (rng() % 36)) + rng() % 1000;
      const int nnodes = static_cast<int>(1 + rng() % 2), nranks = static_cast<int>(2 << (rng() % 3));
      const long i = fst_match(&t, 0, funcs[k], bytes, nnodes, nranks, -1, -1);
      const Choice got = table_choice(rows, colls[k], bytes, nnodes, nranks);
      if (i < 0) {
        EXPECT_EQ(got, kNcclDefault);
        ++unmatched;
      } else {
        EXPECT_EQ(got, (Choice{t.rows[i].algo, t.rows[i].proto, t.rows[i].channels}));
        ++matched;
      }
    }
    fst_table_free(&t);
  }
  EXPECT_GT(matched, 500);
  EXPECT_GT(unmatched, 500);
}

}  // namespace
}  // namespace fabscope::tune
