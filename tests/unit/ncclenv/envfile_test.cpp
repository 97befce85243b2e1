// parse_env_text(): what docker, systemd and NCCL would misread becomes env.syntax naming
// file:line; nothing throws, whatever the bytes.
#include <gtest/gtest.h>

#include <random>

#include "ncclenv/envfile.hpp"

using namespace fabscope;
using namespace fabscope::ncclenv;

namespace {
bool has(const ParsedFile& p, const std::string& text) {
  for (const auto& f : p.findings)
    if (f.message.find(text) != std::string::npos && f.id == "env.syntax") return true;
  return false;
}
}  // namespace

TEST(EnvFileParser, KeyValueCommentsBlankLinesAndCrlf) {
  auto p = parse_env_text("# comment\n\nNCCL_DEBUG=WARN\r\nNCCL_IB_HCA==mlx5_0:1\r\n", "a.env", Dialect::EnvFile);
  EXPECT_TRUE(p.findings.empty());
  ASSERT_EQ(p.entries.size(), 2u);
  EXPECT_EQ(p.entries[0].key, "NCCL_DEBUG");
  EXPECT_EQ(p.entries[0].value, "WARN");
  EXPECT_EQ(p.entries[0].line, 3);
  EXPECT_EQ(p.entries[1].value, "=mlx5_0:1");  // everything after the first '='
  EXPECT_EQ(p.entries[1].where(), "a.env:4");
}

TEST(EnvFileParser, GarbageLineNamesFileAndLine) {
  auto p = parse_env_text("NCCL_DEBUG=WARN\nthis is not a setting\n", "job.env", Dialect::EnvFile);
  ASSERT_EQ(p.findings.size(), 1u);
  EXPECT_EQ(p.findings[0].subject, "job.env:2");
  EXPECT_NE(p.findings[0].message.find("job.env:2"), std::string::npos);
  EXPECT_EQ(p.findings[0].docs, "docs/ncclenv.md#env-syntax");
  EXPECT_EQ(p.entries.size(), 1u);
}

TEST(EnvFileParser, BareNameIsDockerPassThroughNotGarbage) {
  auto p = parse_env_text("NCCL_DEBUG\n", "job.env", Dialect::EnvFile);
  EXPECT_TRUE(p.findings.empty());
  auto c = parse_env_text("NCCL_DEBUG\n", "nccl.conf", Dialect::NcclConf);
  EXPECT_EQ(c.findings.size(), 1u);
}

TEST(EnvFileParser, QuotesAreStrippedAndReported) {
  auto p = parse_env_text("NCCL_IB_HCA=\"=mlx5_0\"\nNCCL_DEBUG='WARN'\n", "nccl.conf", Dialect::NcclConf);
  ASSERT_EQ(p.entries.size(), 2u);
  EXPECT_EQ(p.entries[0].value, "=mlx5_0");
  EXPECT_EQ(p.entries[1].value, "WARN");
  EXPECT_TRUE(has(p, "NCCL keeps the quotes"));
  auto e = parse_env_text("NCCL_DEBUG=\"WARN\n", "a.env", Dialect::EnvFile);
  EXPECT_TRUE(has(e, "unbalanced quote"));
}

TEST(EnvFileParser, ExportPrefixIsReportedAndKeyKept) {
  auto p = parse_env_text("export NCCL_DEBUG=WARN\n", "nccl.conf", Dialect::NcclConf);
  ASSERT_EQ(p.entries.size(), 1u);
  EXPECT_EQ(p.entries[0].key, "NCCL_DEBUG");
  EXPECT_TRUE(has(p, "'export' prefix"));
}

TEST(EnvFileParser, BlanksAroundNameInNcclConf) {
  auto p = parse_env_text("NCCL_DEBUG = WARN\n", "nccl.conf", Dialect::NcclConf);
  EXPECT_TRUE(has(p, "blanks around the name"));
  ASSERT_EQ(p.entries.size(), 1u);
  EXPECT_EQ(p.entries[0].key, "NCCL_DEBUG");
  EXPECT_EQ(p.entries[0].value, "WARN");
}

TEST(EnvFileParser, HugeValueIsCutAtNcclsLimit) {
  std::string big(5000, 'x');
  auto p = parse_env_text("NCCL_TOPO_FILE=" + big + "\n", "a.env", Dialect::EnvFile);
  ASSERT_EQ(p.entries.size(), 1u);
  EXPECT_EQ(p.entries[0].value.size(), kNcclValueMax);
  EXPECT_TRUE(has(p, "NCCL keeps only the first 1023"));
  std::string huge(kMaxLineBytes * 3, 'y');
  auto q = parse_env_text("NCCL_TOPO_FILE=" + huge, "a.env", Dialect::EnvFile);
  EXPECT_TRUE(has(q, "cut at"));
  for (const auto& f : q.findings) EXPECT_LT(f.evidence.size(), 200u);
}

TEST(EnvFileParser, BinaryJunkNeverThrowsAndFindingsAreBounded) {
  std::mt19937 rng(42);
  std::string junk;
  for (int i = 0; i < 200000; ++i) junk += static_cast<char>(rng() & 0xff);
  ParsedFile p;
  ASSERT_NO_THROW(p = parse_env_text(junk, "junk.env", Dialect::EnvFile));
  EXPECT_LE(p.findings.size(), kMaxSyntaxFindings + 1);
  std::string nul("NCCL_DEBUG=WA\0RN\n", 17);
  auto n = parse_env_text(nul, "nul.env", Dialect::EnvFile);
  EXPECT_TRUE(n.entries.empty());
  EXPECT_EQ(n.findings.size(), 1u);
}

TEST(EnvFileParser, InvalidNamesAreSyntaxFindings) {
  auto p = parse_env_text("1NCCL=3\n-x=1\n=novalue\n", "a.env", Dialect::EnvFile);
  EXPECT_TRUE(p.entries.empty());
  EXPECT_EQ(p.findings.size(), 3u);
}
