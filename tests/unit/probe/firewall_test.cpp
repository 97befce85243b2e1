// nft JSON parsing on real `nft -j list ruleset` output (tests/fixtures/nft/SOURCE).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "probe/firewall.hpp"
#include "support/fixtures.hpp"

using namespace fabscope;
using namespace fabscope::probe;
using fabscope::testing::fixture;

namespace {
Firewall load(const std::string& name) {
  std::ifstream in(fixture("nft") / name);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_nft_json(ss.str());
}
const FirewallChain* chain(const Firewall& fw, const std::string& name) {
  for (const auto& c : fw.chains)
    if (c.name == name) return &c;
  return nullptr;
}
}  // namespace

TEST(NftJson, DropRuleForUdp4791) {
  Firewall fw = load("drop-roce-v2.json");
  EXPECT_EQ(fw.source, "nft");
  const auto* in = chain(fw, "input");
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(in->family, "inet");
  EXPECT_EQ(in->hook, "input");
  EXPECT_EQ(in->policy, "accept");
  ASSERT_EQ(in->rules.size(), 2u);
  const auto& r = in->rules[1];
  EXPECT_EQ(r.verdict, "drop");
  ASSERT_EQ(r.matches.size(), 1u);
  EXPECT_EQ(r.matches[0].field, "udp dport");
  ASSERT_EQ(r.matches[0].values.size(), 1u);
  EXPECT_EQ(r.matches[0].values[0].lo, 4791u);
  EXPECT_EQ(r.text, "udp dport 4791 counter drop");
}

TEST(NftJson, SetsRangesJumpsAndComparisons) {
  Firewall fw = load("default-drop-cluster-allowed.json");
  const auto* in = chain(fw, "input");
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(in->policy, "drop");
  EXPECT_EQ(in->rules.back().verdict, "jump");
  EXPECT_EQ(in->rules.back().target, "cluster");
  const auto* cl = chain(fw, "cluster");
  ASSERT_NE(cl, nullptr);
  EXPECT_TRUE(cl->hook.empty());
  const auto& tcp = cl->rules[1].matches[1];
  EXPECT_EQ(tcp.field, "tcp dport");
  ASSERT_EQ(tcp.values.size(), 2u);
  EXPECT_EQ(tcp.values[1].lo, 32768u);
  EXPECT_EQ(tcp.values[1].hi, 60999u);
  EXPECT_EQ(cl->rules[0].matches[0].field, "other");  // ip saddr

  Firewall high = load("reject-tcp-high-ports.json");
  const auto& m = high.chains.at(0).rules.at(0).matches;
  // Loaded as "meta l4proto tcp tcp dport >= 1024": nft folds the protocol match into the port's.
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].field, "tcp dport");
  EXPECT_EQ(m[0].op, "==");
  ASSERT_EQ(m[0].values.size(), 1u);
  EXPECT_EQ(m[0].values[0].lo, 1024u);
  EXPECT_EQ(m[0].values[0].hi, 65535u);
  EXPECT_EQ(high.chains.at(0).rules.at(0).verdict, "reject");
}

TEST(NftJson, NotNftJsonIsAnError) {
  EXPECT_THROW(parse_nft_json("{}"), Error);
  EXPECT_THROW(parse_nft_json("not json"), Error);
  EXPECT_THROW(parse_nft_json(R"({"nftables": [{"rule": {"expr": 5}}]})"), Error);
}

TEST(NftJson, UnknownStatementsKeepTheirName) {
  auto fw = parse_nft_json(
      R"({"nftables":[{"rule":{"family":"ip","table":"t","chain":"c","handle":7,"expr":[{"limit":{"rate":5}},{"drop":null}]}}]})");
  ASSERT_EQ(fw.chains.size(), 1u);
  EXPECT_EQ(fw.chains[0].rules[0].text, "limit drop");
  EXPECT_TRUE(fw.chains[0].rules[0].matches.empty());
}
