// lint(): one behaviour per rule, on the real captures where they have the facts, else on values.
#include <gtest/gtest.h>

#include "env_test_util.hpp"
#include "ncclenv/lint.hpp"

using namespace fabscope;
using namespace fabscope::ncclenv;
using fabscope::testing::device;
using fabscope::testing::ib_port;
using fabscope::testing::probe_fixture;
using fabscope::testing::roce_port;

namespace {

std::vector<EnvEntry> env(std::initializer_list<std::pair<const char*, const char*>> kv) {
  std::vector<EnvEntry> out;
  for (const auto& [k, v] : kv) out.push_back({"environment", 0, k, v});
  return out;
}

const Finding* find(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

std::size_t count(const std::vector<Finding>& fs, const std::string& id) {
  std::size_t n = 0;
  for (const auto& f : fs) n += f.id == id;
  return n;
}

const NodeInfo& rxe() {
  static const NodeInfo n = probe_fixture("rxe-vm");
  return n;
}
const NodeInfo& h200() {
  static const NodeInfo n = probe_fixture("h200x2-node");
  return n;
}

}  // namespace

TEST(EnvLint, CleanPlanGivesNoFindings) {
  auto fs = lint(rxe(), env({{"NCCL_IB_HCA", "=rxe0:1,rxe1:1"}, {"NCCL_IB_GID_INDEX", "1"},
                             {"NCCL_SOCKET_IFNAME", "=veth0"}, {"NCCL_DEBUG", "WARN"}}));
  EXPECT_TRUE(fs.empty()) << fs.front().id << ": " << fs.front().message;
  EXPECT_EQ(exit_code_for(fs), 0);
}

TEST(EnvLint, UnknownVariable_SuggestsClosestName) {
  auto fs = lint(rxe(), env({{"NCCL_IB_HCAS", "rxe"}, {"NCCL_SOCKET_IFACE", "veth"}, {"NCCL_FOO_BAR_BAZ_QUUX", "1"}}));
  ASSERT_EQ(count(fs, "env.unknown_variable"), 3u);
  std::string all;
  for (const auto& f : fs) all += f.message + "\n";
  EXPECT_NE(all.find("NCCL_IB_HCAS is not an NCCL variable fabscope knows; NCCL ignores names it does not read. "
                     "Did you mean NCCL_IB_HCA?"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("Did you mean NCCL_SOCKET_IFNAME?"), std::string::npos) << all;
  EXPECT_EQ(closest_var("NCCL_FOO_BAR_BAZ_QUUX"), "");
  EXPECT_EQ(find(fs, "env.unknown_variable")->docs, "docs/ncclenv.md#env-unknown_variable");
}

TEST(EnvLint, NonNcclNamesAreIgnored) {
  EXPECT_TRUE(lint(rxe(), env({{"PATH", "/bin"}, {"CUDA_VISIBLE_DEVICES", "0"}})).empty());
}

// Seen on the 2x H200 node: NVIDIA's container image exports NCCL_VERSION=2.28.3-1.
TEST(EnvLint, NamesOtherSoftwareOwns_AreNoTypo) {
  EXPECT_TRUE(lint(h200(), env({{"NCCL_VERSION", "2.28.3-1"}})).empty());
  auto fs = lint(h200(), env({{"NCCL_ASYNC_ERROR_HANDLING", "1"}}));
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "env.unknown_variable");
  EXPECT_EQ(fs[0].severity, Severity::Info);
  EXPECT_NE(fs[0].remedy.find("TORCH_NCCL_ASYNC_ERROR_HANDLING"), std::string::npos) << fs[0].remedy;
}

TEST(EnvLint, DebugVariable_InfoAndTraceWarnWarnDoesNot) {
  EXPECT_EQ(count(lint(rxe(), env({{"NCCL_DEBUG", "INFO"}})), "env.debug_variable"), 1u);
  EXPECT_EQ(count(lint(rxe(), env({{"NCCL_DEBUG", "trace"}})), "env.debug_variable"), 1u);
  EXPECT_EQ(count(lint(rxe(), env({{"NCCL_DEBUG", "WARN"}})), "env.debug_variable"), 0u);
  auto fs = lint(rxe(), env({{"NCCL_DEBUG_SUBSYS", "INIT,NET"}, {"NCCL_ALGO", "Ring"}}));
  ASSERT_EQ(count(fs, "env.debug_variable"), 2u);
  EXPECT_EQ(worst(fs), Severity::Warn);  // NCCL_ALGO warns, NCCL_DEBUG_SUBSYS is info
}

TEST(EnvLint, BadValue_TypesAndRanges) {
  auto bad = [](const char* k, const char* v) { return count(lint(rxe(), env({{k, v}})), "env.bad_value"); };
  EXPECT_EQ(bad("NCCL_IB_TIMEOUT", "abc"), 1u);
  EXPECT_EQ(bad("NCCL_IB_TIMEOUT", "40"), 1u);  // 5-bit exponent
  EXPECT_EQ(bad("NCCL_IB_TIMEOUT", "22"), 0u);
  EXPECT_EQ(bad("NCCL_IB_RETRY_CNT", "8"), 1u);
  EXPECT_EQ(bad("NCCL_IB_DISABLE", "true"), 1u);  // NCCL reads a number, ignores "true"
  EXPECT_EQ(bad("NCCL_BUFFSIZE", "4M"), 1u);
  EXPECT_EQ(bad("NCCL_BUFFSIZE", "0x400000"), 0u);
  EXPECT_EQ(bad("NCCL_NET_GDR_LEVEL", "PHB"), 0u);
  EXPECT_EQ(bad("NCCL_NET_GDR_LEVEL", "near"), 1u);
  EXPECT_EQ(bad("NCCL_IB_TC", "256"), 1u);
  EXPECT_EQ(bad("NCCL_SOCKET_NTHREADS", ""), 1u);
}

TEST(EnvLint, HcaMatchesNothing_WholeListFails) {
  auto fs = lint(rxe(), env({{"NCCL_IB_HCA", "mlx5"}}));
  EXPECT_EQ(count(fs, "env.hca_matches_nothing"), 1u);  // the whole list, not also its one entry
  const Finding* f = nullptr;
  for (const auto& x : fs)
    if (x.id == "env.hca_matches_nothing" && x.severity == Severity::Fail) f = &x;
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->evidence.find("rxe0:1"), std::string::npos);
  EXPECT_EQ(exit_code_for(fs), 2);
}

TEST(EnvLint, HcaMatchesNothing_OneEntryWarns) {
  auto fs = lint(rxe(), env({{"NCCL_IB_HCA", "=rxe0,rxe7"}}));
  ASSERT_EQ(count(fs, "env.hca_matches_nothing"), 1u);
  EXPECT_EQ(find(fs, "env.hca_matches_nothing")->severity, Severity::Warn);
}

TEST(EnvLint, HcaSyntax_ExcludeExactAndPorts) {
  EXPECT_EQ(count(lint(rxe(), env({{"NCCL_IB_HCA", "^=rxe0"}})), "env.hca_matches_nothing"), 0u);
  EXPECT_EQ(count(lint(rxe(), env({{"NCCL_IB_HCA", "^rxe"}})), "env.hca_matches_nothing"), 1u);  // excludes all
  EXPECT_EQ(count(lint(rxe(), env({{"NCCL_IB_HCA", "=rxe"}})), "env.hca_matches_nothing"), 1u);  // exact: no "rxe"
  EXPECT_EQ(count(lint(rxe(), env({{"NCCL_IB_HCA", "rxe0:2"}})), "env.hca_matches_nothing"), 1u);  // no port 2
  NameFilter f = parse_name_filter("^=mlx5_0:1,mlx5_1", true);
  EXPECT_TRUE(f.exclude);
  EXPECT_TRUE(f.exact);
  ASSERT_EQ(f.items.size(), 2u);
  EXPECT_EQ(f.items[0].port, 1);
  EXPECT_FALSE(filter_selects(f, "mlx5_0", 1));
  EXPECT_TRUE(filter_selects(f, "mlx5_0", 2));
  EXPECT_TRUE(filter_selects(parse_name_filter("mlx5", true), "mlx5_10", 1));
}

TEST(EnvLint, HcaPortDown) {
  NodeInfo n;
  n.rdma_devices.push_back(device("mlx5_0", {ib_port(1, 400)}));
  n.rdma_devices.push_back(device("mlx5_1", {ib_port(1, 400, "DOWN", "Disabled")}));
  auto fs = lint(n, env({{"NCCL_IB_HCA", "mlx5"}}));
  ASSERT_NE(find(fs, "env.hca_port_down"), nullptr);
  EXPECT_EQ(find(fs, "env.hca_port_down")->severity, Severity::Warn);
  auto only_down = lint(n, env({{"NCCL_IB_HCA", "=mlx5_1"}}));
  ASSERT_NE(find(only_down, "env.hca_port_down"), nullptr);
  EXPECT_EQ(find(only_down, "env.hca_port_down")->severity, Severity::Fail);
}

TEST(EnvLint, IfnameMatchesNothing) {
  auto fs = lint(h200(), env({{"NCCL_SOCKET_IFNAME", "ib"}}));
  ASSERT_NE(find(fs, "env.ifname_matches_nothing"), nullptr);
  EXPECT_EQ(find(fs, "env.ifname_matches_nothing")->severity, Severity::Fail);
  EXPECT_EQ(count(lint(h200(), env({{"NCCL_SOCKET_IFNAME", "=eth0"}})), "env.ifname_matches_nothing"), 0u);
  // ^eth leaves lo (NCCL takes it: a user's filter is matched as written) and the ifb devices,
  // which are down: loopback only.
  EXPECT_EQ(count(lint(h200(), env({{"NCCL_SOCKET_IFNAME", "^eth"}})), "env.ifname_matches_nothing"), 0u);
  EXPECT_EQ(count(lint(h200(), env({{"NCCL_SOCKET_IFNAME", "^eth"}})), "env.ifname_loopback"), 1u);
  EXPECT_EQ(count(lint(h200(), env({{"NCCL_SOCKET_IFNAME", "ifb"}})), "env.ifname_matches_nothing"), 1u);  // down
  EXPECT_EQ(count(lint(h200(), env({{"NCCL_SOCKET_IFNAME", "=eth"}})), "env.ifname_matches_nothing"), 1u);
}

// NCCL matches a user's NCCL_SOCKET_IFNAME as written, lo included (it leaves lo out only when it
// picks an interface itself): "lo" works on one node and reaches no other.
TEST(EnvLint, IfnameLoIsLoopbackNotNothing) {
  for (const char* v : {"lo", "=lo"}) {
    auto fs = lint(h200(), env({{"NCCL_SOCKET_IFNAME", v}}));
    EXPECT_EQ(count(fs, "env.ifname_matches_nothing"), 0u) << v;
    ASSERT_NE(find(fs, "env.ifname_loopback"), nullptr) << v;
    EXPECT_EQ(find(fs, "env.ifname_loopback")->severity, Severity::Warn);
    EXPECT_NE(find(fs, "env.ifname_loopback")->remedy.find("=eth0"), std::string::npos);
  }
  // lo together with a real interface: not loopback only.
  EXPECT_EQ(count(lint(h200(), env({{"NCCL_SOCKET_IFNAME", "lo,eth"}})), "env.ifname_loopback"), 0u);
  EXPECT_EQ(count(lint(h200(), env({{"NCCL_SOCKET_IFNAME", "eth"}})), "env.ifname_loopback"), 0u);
}

// The remedy names the node's own interfaces that are up, never an eth0 it does not have.
TEST(EnvLint, IfnameRemedyNamesThisNodesInterfaces) {
  auto fs = lint(rxe(), env({{"NCCL_SOCKET_IFNAME", "=nosuchif0"}}));
  const auto* f = find(fs, "env.ifname_matches_nothing");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->remedy.find("=eth0"), std::string::npos) << f->remedy;
  EXPECT_NE(f->remedy.find("=veth"), std::string::npos) << f->remedy;
}

TEST(EnvLint, GidIndexInvalid_EmptyEntryFails) {
  auto fs = lint(rxe(), env({{"NCCL_IB_GID_INDEX", "3"}}));  // rxe lists GIDs 0 and 1 only
  ASSERT_EQ(count(fs, "env.gid_index_invalid"), 2u);
  EXPECT_EQ(find(fs, "env.gid_index_invalid")->severity, Severity::Fail);
  EXPECT_NE(find(fs, "env.gid_index_invalid")->remedy.find("NCCL_IB_GID_INDEX=1"), std::string::npos);
}

TEST(EnvLint, GidIndexInvalid_RoceV1AndLinkLocalWarn) {
  NodeInfo n;
  n.rdma_devices.push_back(device("mlx5_0", {roce_port(1, "eth2", 2)}));  // 0 v1, 1 v2 fe80, 2 v1 ipv4, 3 v2 ipv4
  auto v1 = lint(n, env({{"NCCL_IB_GID_INDEX", "2"}}));
  ASSERT_NE(find(v1, "env.gid_index_invalid"), nullptr);
  EXPECT_EQ(find(v1, "env.gid_index_invalid")->severity, Severity::Warn);
  EXPECT_NE(find(v1, "env.gid_index_invalid")->message.find("RoCE v1"), std::string::npos);
  EXPECT_NE(find(lint(n, env({{"NCCL_IB_GID_INDEX", "1"}})), "env.gid_index_invalid"), nullptr);
  EXPECT_EQ(find(lint(n, env({{"NCCL_IB_GID_INDEX", "3"}})), "env.gid_index_invalid"), nullptr);
  EXPECT_EQ(find(lint(n, env({{"NCCL_IB_GID_INDEX", "-1"}})), "env.gid_index_invalid"), nullptr);
}

TEST(EnvLint, IbDisabledWithRdma) {
  EXPECT_NE(find(lint(rxe(), env({{"NCCL_IB_DISABLE", "1"}})), "env.ib_disabled_with_rdma"), nullptr);
  EXPECT_EQ(find(lint(rxe(), env({{"NCCL_IB_DISABLE", "0"}})), "env.ib_disabled_with_rdma"), nullptr);
  EXPECT_EQ(find(lint(h200(), env({{"NCCL_IB_DISABLE", "1"}})), "env.ib_disabled_with_rdma"), nullptr);
}

TEST(EnvLint, P2pOrShmDisabled) {
  EXPECT_EQ(count(lint(h200(), env({{"NCCL_P2P_DISABLE", "1"}, {"NCCL_SHM_DISABLE", "1"}})), "env.p2p_or_shm_disabled"), 2u);
  EXPECT_EQ(count(lint(h200(), env({{"NCCL_P2P_LEVEL", "LOC"}})), "env.p2p_or_shm_disabled"), 1u);
  EXPECT_EQ(count(lint(h200(), env({{"NCCL_P2P_LEVEL", "NVL"}})), "env.p2p_or_shm_disabled"), 0u);
  // Not also reported as a debug variable.
  EXPECT_EQ(count(lint(h200(), env({{"NCCL_P2P_DISABLE", "1"}})), "env.debug_variable"), 0u);
}

TEST(EnvLint, Contradiction) {
  auto fs = lint(rxe(), env({{"NCCL_IB_DISABLE", "1"}, {"NCCL_IB_HCA", "rxe0"}, {"NCCL_NET", "IB"}}));
  ASSERT_EQ(count(fs, "env.contradiction"), 2u);
  EXPECT_EQ(exit_code_for(fs), 2);  // NCCL_NET=IB with IB disabled cannot initialise
  EXPECT_EQ(count(lint(rxe(), env({{"NCCL_MIN_NCHANNELS", "16"}, {"NCCL_MAX_NCHANNELS", "8"}})), "env.contradiction"), 1u);
  EXPECT_EQ(count(lint(h200(), env({{"NCCL_SOCKET_NTHREADS", "16"}, {"NCCL_NSOCKS_PERTHREAD", "8"}})), "env.contradiction"), 1u);
  EXPECT_EQ(count(lint(rxe(), env({{"NCCL_NET", "Socket"}, {"NCCL_IB_HCA", "rxe0"}})), "env.contradiction"), 1u);
}

TEST(EnvLint, Duplicate_SameFileWarnsAcrossSourcesInforms) {
  std::vector<EnvEntry> same = {{"/etc/nccl.conf", 1, "NCCL_DEBUG", "WARN"}, {"/etc/nccl.conf", 4, "NCCL_DEBUG", "VERSION"}};
  auto fs = lint(rxe(), same);
  ASSERT_EQ(count(fs, "env.duplicate"), 1u);
  EXPECT_EQ(find(fs, "env.duplicate")->severity, Severity::Warn);
  EXPECT_NE(find(fs, "env.duplicate")->message.find("/etc/nccl.conf:1 is the one used"), std::string::npos);
  std::vector<EnvEntry> layered = {{"environment", 0, "NCCL_DEBUG", "WARN"}, {"/etc/nccl.conf", 2, "NCCL_DEBUG", "INFO"}};
  auto fl = lint(rxe(), layered);
  ASSERT_EQ(count(fl, "env.duplicate"), 1u);
  EXPECT_EQ(find(fl, "env.duplicate")->severity, Severity::Info);
  EXPECT_EQ(count(fl, "env.debug_variable"), 0u);  // the environment's WARN is what NCCL uses
}

TEST(EnvLint, EveryRuleIdHasItsDocsAnchorPage) {
  for (const auto& r : lint_rules()) EXPECT_EQ(docs_anchor(r.id, "docs/ncclenv.md").rfind("docs/ncclenv.md#env-", 0), 0u);
}
