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

NetPathInputs shape(int nnodes, const std::string& nccl_net, const std::string& ib_disable, bool active_rdma_port) {
  NetPathInputs in;
  in.nnodes = nnodes;
  in.nccl_net = nccl_net;
  in.ib_disable = ib_disable;
  in.active_rdma_port = active_rdma_port;
  return in;
}

NetPathInputs one_node_without_p2p_shm(const std::string& p2p, const std::string& shm) {
  NetPathInputs in = shape(1, "", "", false);
  in.p2p_disable = p2p;
  in.shm_disable = shm;
  return in;
}

TEST(NetPath, OneNodeHasNoNetworkTransport) {
  EXPECT_EQ(detect_net_path(shape(1, "", "", true)), NetPath::None);
  EXPECT_EQ(detect_net_path(shape(1, "Socket", "", false)), NetPath::None);
}

TEST(NetPath, FollowsNcclsChoiceBetweenNodes) {
  EXPECT_EQ(detect_net_path(shape(2, "", "", true)), NetPath::IB);
  EXPECT_EQ(detect_net_path(shape(2, "", "", false)), NetPath::Socket);
  EXPECT_EQ(detect_net_path(shape(2, "", "1", true)), NetPath::Socket);
  EXPECT_EQ(detect_net_path(shape(2, "", "0", true)), NetPath::IB);
  EXPECT_EQ(detect_net_path(shape(2, "socket", "", true)), NetPath::Socket);
  EXPECT_EQ(detect_net_path(shape(2, "IB", "", false)), NetPath::IB);
  EXPECT_EQ(detect_net_path(shape(2, "AWS Libfabric", "", true)), NetPath::Other);
}

TEST(NetPath, OneNodeWithP2pAndShmDisabledUsesSocketsWithoutRdma) {
  EXPECT_EQ(detect_net_path(one_node_without_p2p_shm("1", "1")), NetPath::Socket);
}

TEST(NetPath, OneNodeWithP2pAndShmDisabledUsesIbWhenAPortIsActive) {
  NetPathInputs in = one_node_without_p2p_shm("1", "1");
  in.active_rdma_port = true;
  EXPECT_EQ(detect_net_path(in), NetPath::IB);
  in.ib_disable = "1";
  EXPECT_EQ(detect_net_path(in), NetPath::Socket);
  in.ib_disable = "";
  in.nccl_net = "Socket";
  EXPECT_EQ(detect_net_path(in), NetPath::Socket);
}

TEST(NetPath, OneNodeKeepsP2pOrShmWhenOnlyOneIsDisabled) {
  EXPECT_EQ(detect_net_path(one_node_without_p2p_shm("1", "")), NetPath::None);
  EXPECT_EQ(detect_net_path(one_node_without_p2p_shm("", "1")), NetPath::None);
  EXPECT_EQ(detect_net_path(one_node_without_p2p_shm("1", "0")), NetPath::None);
  EXPECT_EQ(detect_net_path(one_node_without_p2p_shm("0", "1")), NetPath::None);
}

TEST(EnvGroups, EveryGroupStartsWithNcclsDefault) {
  for (NetPath p : {NetPath::None, NetPath::IB, NetPath::Socket})
    for (const auto& g : env_groups(p, {})) {
      ASSERT_FALSE(g.candidates.empty()) << g.name;
      EXPECT_TRUE(g.candidates.front().is_default()) << g.name;
    }
}

TEST(EnvGroups, OneNodeSkipsTheNetworkSettingsSayingWhy) {
  auto gs = env_groups(NetPath::None, {});
  ASSERT_EQ(gs.size(), 4u);
  EXPECT_TRUE(group(gs, "NCCL_BUFFSIZE").skipped.empty());
  EXPECT_EQ(group(gs, "NCCL_BUFFSIZE").candidates.size(), 5u);
  EXPECT_TRUE(group(gs, "NCCL_NTHREADS").skipped.empty());
  EXPECT_NE(group(gs, "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD").skipped.find("one node"), std::string::npos);
  EXPECT_NE(group(gs, "NCCL_IB_QPS_PER_CONNECTION").skipped.find("one node"), std::string::npos);
}

TEST(EnvGroups, SocketThreadsOnlyOnNetSocketAndQpsOnlyOnNetIb) {
  auto ib = env_groups(NetPath::IB, {});
  EXPECT_NE(group(ib, "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD").skipped.find("NET/IB"), std::string::npos);
  EXPECT_TRUE(group(ib, "NCCL_IB_QPS_PER_CONNECTION").skipped.empty());
  auto sock = env_groups(NetPath::Socket, {});
  EXPECT_TRUE(group(sock, "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD").skipped.empty());
  EXPECT_NE(group(sock, "NCCL_IB_QPS_PER_CONNECTION").skipped.find("NET/Socket"), std::string::npos);
}

TEST(EnvGroups, OneNodeOverSocketsSearchesTheSocketThreads) {
  const NetPath p = detect_net_path(one_node_without_p2p_shm("1", "1"));
  auto gs = env_groups(p, {});
  EXPECT_TRUE(group(gs, "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD").skipped.empty());
  EXPECT_GT(group(gs, "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD").candidates.size(), 1u);
  EXPECT_NE(group(gs, "NCCL_IB_QPS_PER_CONNECTION").skipped.find("NET/Socket"), std::string::npos);
}

TEST(EnvGroups, OneNodeSkipReasonNamesTheVariablesThatWouldUseTheNetwork) {
  auto gs = env_groups(NetPath::None, {});
  EXPECT_NE(group(gs, "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD").skipped.find("NCCL_P2P_DISABLE=1"),
            std::string::npos);
}

TEST(EnvGroups, SocketCandidatesSetBothVariablesWithinNcclsCap) {
  const auto gs = env_groups(NetPath::Socket, {});
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
  auto gs = env_groups(NetPath::IB, spec);
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

TEST(EnvGroups, TheTransportsSettingsAreSearchedFirst) {
  // On the socket path one helper thread bounds the rate: the buffer is judged on the widened path.
  const auto gs = env_groups(NetPath::Socket, {});
  ASSERT_EQ(gs.size(), 4u);
  EXPECT_EQ(gs[0].name, "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD");
  EXPECT_EQ(gs[1].name, "NCCL_IB_QPS_PER_CONNECTION");
  EXPECT_EQ(gs[2].name, "NCCL_BUFFSIZE");
  EXPECT_EQ(gs[3].name, "NCCL_NTHREADS");
  EnvSpaceSpec spec;
  spec.only = parse_env_settings("buffsize,socket");  // the order of the list does not matter
  const auto two = env_groups(NetPath::Socket, spec);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].name, "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD");
}

}  // namespace
}  // namespace fabscope::tune
