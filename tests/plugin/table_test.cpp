// The tuner CSV reader (plugins/nccl-tuner/table.c) on single lines and whole texts.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "table.h"

namespace {

int parse(const std::string& line, fst_row* row, std::string* why = nullptr) {
  char buf[256];
  int rc = fst_parse_line(line.data(), line.size(), row, buf, sizeof buf);
  if (why) *why = buf;
  return rc;
}

TEST(TunerTableLine, EightFieldsMatchAnyPipeOpsAndRegBuff) {
  fst_row r{};
  ASSERT_EQ(parse("allreduce,0,65536,tree,simple,2,1,-1", &r), 1);
  EXPECT_EQ(r.coll, 4);
  EXPECT_EQ(r.min_bytes, 0u);
  EXPECT_EQ(r.max_bytes, 65536u);
  EXPECT_EQ(r.algo, 0);
  EXPECT_EQ(r.proto, 2);
  EXPECT_EQ(r.channels, 2);
  EXPECT_EQ(r.nnodes, 1);
  EXPECT_EQ(r.nranks, -1);
  EXPECT_EQ(r.pipe_ops, -1);
  EXPECT_EQ(r.reg_buff, -1);
}

TEST(TunerTableLine, TenFieldsAsNvidiaExample) {
  fst_row r{};
  ASSERT_EQ(parse("allreduce,65537,1048576,ring,simple,4,4,32,1,0", &r), 1);
  EXPECT_EQ(r.pipe_ops, 1);
  EXPECT_EQ(r.reg_buff, 0);
}

TEST(TunerTableLine, CommentsBlanksAndHeaderAreSkipped) {
  fst_row r{};
  EXPECT_EQ(parse("", &r), 0);
  EXPECT_EQ(parse("   ", &r), 0);
  EXPECT_EQ(parse("# collective_type,min_bytes", &r), 0);
  EXPECT_EQ(parse("collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks", &r), 0);
}

TEST(TunerTableLine, BadValuesNameTheField) {
  fst_row r{};
  std::string why;
  EXPECT_EQ(parse("allreduce,10,5,ring,simple,2,-1,-1", &r, &why), -1);
  EXPECT_NE(why.find("min_bytes is above max_bytes"), std::string::npos) << why;
  EXPECT_EQ(parse("allreduce,0,5,ring,simple,0,-1,-1", &r, &why), -1);
  EXPECT_NE(why.find("channels"), std::string::npos) << why;
  EXPECT_EQ(parse("allreduce,0,5,ring,fast,2,-1,-1", &r, &why), -1);
  EXPECT_NE(why.find("unknown protocol"), std::string::npos) << why;
  EXPECT_EQ(parse("allreduce,0,5,ringg,simple,2,-1,-1", &r, &why), -1);
  EXPECT_NE(why.find("unknown algorithm"), std::string::npos) << why;
  EXPECT_EQ(parse("allreduce,-5,5,ring,simple,2,-1,-1", &r, &why), -1);
  EXPECT_EQ(parse("allreduce,0,5,ring,simple,2,-2,-1", &r, &why), -1);
  EXPECT_NE(why.find("nNodes"), std::string::npos) << why;
  EXPECT_EQ(parse("allreduce,0,5,ring,simple,2,-1,-1,1,2", &r, &why), -1);
  EXPECT_NE(why.find("regBuff"), std::string::npos) << why;
  EXPECT_EQ(parse("allreduce,0,5,ring,simple,2,-1,-1,1,0,7", &r, &why), -1);
  EXPECT_NE(why.find("more than 10 fields"), std::string::npos) << why;
  EXPECT_EQ(parse("allreduce,0,18446744073709551616,ring,simple,2,-1,-1", &r, &why), -1);
  EXPECT_EQ(parse("allreduce,0,18446744073709551615,ring,simple,2,-1,-1", &r), 1);
}

TEST(TunerTableLine, OverlongLineIsBad) {
  fst_row r{};
  std::string why;
  std::string line = "allreduce,0,5,ring,simple,2,-1,-1" + std::string(FST_MAX_LINE, ' ') + "x";
  EXPECT_EQ(parse(line, &r, &why), -1);
  EXPECT_NE(why.find("longer than"), std::string::npos);
}

TEST(TunerTableText, FirstMatchInFileOrderWins) {
  std::string text = "allreduce,0,100,ring,ll,2,-1,-1\nallreduce,0,1000,tree,simple,4,-1,-1\n";
  fst_table t;
  ASSERT_EQ(fst_parse_text(text.data(), text.size(), &t, nullptr, nullptr), 0);
  ASSERT_EQ(t.count, 2u);
  EXPECT_EQ(fst_match(&t, 0, 4, 50, 1, 8, 1, 0), 0);
  EXPECT_EQ(fst_match(&t, 1, 4, 50, 1, 8, 1, 0), 1);
  EXPECT_EQ(fst_match(&t, 0, 4, 500, 1, 8, 1, 0), 1);
  EXPECT_EQ(fst_match(&t, 0, 4, 5000, 1, 8, 1, 0), -1);
  EXPECT_EQ(fst_match(&t, 0, 2, 50, 1, 8, 1, 0), -1);
  fst_table_free(&t);
}

TEST(TunerTableText, BadLinesCountedWithTheirNumbers) {
  std::string text = "x\n\nallreduce,0,1,ring,ll,2,-1,-1\r\nbad,line";  // no final newline
  std::vector<size_t> lines;
  fst_table t;
  ASSERT_EQ(fst_parse_text(text.data(), text.size(), &t,
                           [](void* arg, size_t line, const char*) {
                             static_cast<std::vector<size_t>*>(arg)->push_back(line);
                           },
                           &lines), 0);
  EXPECT_EQ(t.count, 1u);
  EXPECT_EQ(t.bad_lines, 2u);
  EXPECT_EQ(lines, (std::vector<size_t>{1, 4}));
  fst_table_free(&t);
}

}  // namespace
