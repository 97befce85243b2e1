// Which environment-only settings are searched on which path, and with which values.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.hpp"
#include "tune/env_space.hpp"

namespace fabscope::tune {
namespace {

const EnvGroup& group(const std::vector<EnvGroup>& gs, const std::string& name) {
  auto it = std::find_if(gs.begin(), gs.end(), [&](const EnvGroup& g) { return g.name == name; });
  EXPECT_NE(it, gs.end()) << name;
  return *it;
}

TEST(NetPath, OneNodeHasNoNetworkTransport) {
  EXPECT_EQ(detect_net_path(1, "", "", true), NetPath::None);
  EXPECT_EQ(detect_net_path(1, "Socket", "", false), NetPath::None);
}

TEST(NetPath, FollowsNcclsChoiceBetweenNodes) {
  EXPECT_EQ(detect_net_path(2, "", "", true), NetPath::IB);
  EXPECT_EQ(detect_net_path(2, "", "", false), NetPath::Socket);
  EXPECT_EQ(detect_net_path(2, "", "1", true), NetPath::Socket);
  EXPECT_EQ(detect_net_path(2, "", "0", true), NetPath::IB);
  EXPECT_EQ(detect_net_path(2, "socket", "", true), NetPath::Socket);
  EXPECT_EQ(detect_net_path(2, "IB", "", false), NetPath::IB);
  EXPECT_EQ(detect_net_path(2, "AWS Libfabric", "", true), NetPath::Other);
}

TEST(EnvGroups, EveryGroupStartsWithNcclsDefault) {
  for (NetPath p : {NetPath::None, NetPath::IB, NetPath::Socket})
    for (const auto& g : env_groups(p, p == NetPath::None ? 1 : 2, {})) {
      ASSERT_FALSE(g.candidates.empty()) << g.name;
      EXPECT_TRUE(g.candidates.front().is_default()) << g.name;
    }
}

TEST(EnvGroups, OneNodeSkipsTheNetworkSettingsSayingWhy) {
  auto gs = env_groups(NetPath::None, 1, {});
  ASSERT_EQ(gs.size(), 4u);
  EXPECT_TRUE(group(gs, "NCCL_BUFFSIZE").skipped.empty());
  EXPECT_EQ(group(gs, "NCCL_BUFFSIZE").candidates.size(), 5u);
  EXPECT_TRUE(group(gs, "NCCL_NTHREADS").skipped.empty());
  EXPECT_NE(group(gs, "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD").skipped.find("one node"), std::string::npos);
  EXPECT_NE(group(gs, "NCCL_IB_QPS_PER_CONNECTION").skipped.find("one node"), std::string::npos);
}

TEST(EnvGroups, SocketThreadsOnlyOnNetSocketAndQpsOnlyOnNetIb) {
  auto ib = env_groups(NetPath::IB, 2, {});
  EXPECT_NE(group(ib, "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD").skipped.find("NET/IB"), std::string::npos);
  EXPECT_TRUE(group(ib, "NCCL_IB_QPS_PER_CONNECTION").skipped.empty());
  auto sock = env_groups(NetPath::Socket, 2, {});
  EXPECT_TRUE(group(sock, "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD").skipped.empty());
  EXPECT_NE(group(sock, "NCCL_IB_QPS_PER_CONNECTION").skipped.find("NET/Socket"), std::string::npos);
}

TEST(EnvGroups, SocketCandidatesSetBothVariablesWithinNcclsCap) {
  const auto gs = env_groups(NetPath::Socket, 2, {});
  const auto& g = group(gs, "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD");
  EXPECT_GT(g.candidates.size(), 5u);
  for (std::size_t i = 1; i < g.candidates.size(); ++i) {
    const auto& v = g.candidates[i].vars;
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0].first, "NCCL_SOCKET_NTHREADS");
    EXPECT_EQ(v[1].first, "NCCL_NSOCKS_PERTHREAD");
    EXPECT_LE(std::stoi(v[0].second) * std::stoi(v[1].second), 64);
  }
}

TEST(EnvGroups, OnlyTheNamedSettings) {
  EnvSpaceSpec spec;
  spec.only = parse_env_settings("nthreads");
  auto gs = env_groups(NetPath::IB, 2, spec);
  ASSERT_EQ(gs.size(), 1u);
  EXPECT_EQ(gs[0].name, "NCCL_NTHREADS");
}

TEST(EnvSettings, UnknownNameIsAUsageErrorNamingIt) {
  try {
    parse_env_settings("buffsize,warp");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'warp'"), std::string::npos);
  }
}

TEST(EnvAssignment, MergedReplacesSameNamesAndLabelsInOrder) {
  EnvAssignment a{{{"NCCL_BUFFSIZE", "1"}, {"NCCL_NTHREADS", "256"}}};
  EnvAssignment b{{{"NCCL_NTHREADS", "512"}, {"NCCL_IB_QPS_PER_CONNECTION", "4"}}};
  EXPECT_EQ(merged(a, b).label(), "NCCL_BUFFSIZE=1 NCCL_NTHREADS=512 NCCL_IB_QPS_PER_CONNECTION=4");
  EXPECT_EQ(EnvAssignment{}.label(), "default");
}

}  // namespace
}  // namespace fabscope::tune
