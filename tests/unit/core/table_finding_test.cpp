#include <gtest/gtest.h>

#include <sstream>

#include "core/error.hpp"
#include "core/finding.hpp"
#include "core/node_info.hpp"
#include "core/table.hpp"

using namespace fabscope;

TEST(Table, FitsWidthByCuttingWidestColumn) {
  core::Table t({"name", "value"});
  t.add({"a", std::string(200, 'x')});
  std::istringstream lines(t.render(100));
  std::string line;
  while (std::getline(lines, line)) EXPECT_LE(line.size(), 100u) << line;
}

TEST(Table, RightAlignsNumbers) {
  core::Table t({"n", "x"});
  t.align_right(0);
  t.add({"1", "a"});
  t.add({"100", "b"});
  EXPECT_EQ(t.render(), "  n  x\n  1  a\n100  b\n");
}

TEST(Finding, ExitCodeFollowsWorstSeverity) {
  std::vector<Finding> f;
  EXPECT_EQ(exit_code_for(f), 0);
  f.push_back({"a", Severity::Info});
  EXPECT_EQ(exit_code_for(f), 0);
  f.push_back({"b", Severity::Warn});
  EXPECT_EQ(exit_code_for(f), 1);
  f.push_back({"c", Severity::Fail});
  EXPECT_EQ(exit_code_for(f), 2);
}

TEST(Finding, JsonRoundTripAndAnchor) {
  Finding f{"link.port_down", Severity::Fail, "mlx5_0:1", "port is DOWN", "state=DOWN", "fix", ""};
  f.docs = docs_anchor(f.id);
  EXPECT_EQ(f.docs, "docs/checks.md#link-port_down");
  json j = f;
  EXPECT_EQ(j["severity"], "fail");
  auto back = j.get<Finding>();
  EXPECT_EQ(back.id, f.id);
  EXPECT_EQ(back.severity, Severity::Fail);
}

TEST(NodeInfo, JsonRoundTripKeepsUnlimitedAndNulls) {
  NodeInfo n;
  n.hostname = "h";
  n.kernel.memlock_soft_bytes = kUnlimited;
  RdmaDevice d;
  d.name = "mlx5_0";
  RdmaPort p;
  p.port = 1;
  p.state = "ACTIVE";
  p.rate_gbps = 400;
  p.counters["port_xmit_data"] = 4;
  d.ports.push_back(p);
  n.rdma_devices.push_back(d);
  json j = n;
  EXPECT_EQ(j["schema"], "fabscope.node");
  EXPECT_EQ(j["kernel"]["memlock_soft_bytes"], "unlimited");
  EXPECT_TRUE(j["kernel"]["memlock_hard_bytes"].is_null());
  EXPECT_TRUE(j["rdma_devices"][0]["ports"][0]["lid"].is_null());
  auto back = j.get<NodeInfo>();
  EXPECT_EQ(back.kernel.memlock_soft_bytes, kUnlimited);
  EXPECT_EQ(back.rdma_devices[0].ports[0].rate_gbps, 400);
}

// Found by the long run of fabscope_node_json_fuzz: a counter beyond 64 bits parses as a float,
// and nlohmann's cast of it to uint64_t was undefined behaviour.
// docs/formats.md: counters are unsigned; nlohmann would wrap -5 into 18446744073709551611.
TEST(NodeInfo, NegativeCountersRatesAndIdsAreRefusedNamingTheField) {
  NodeInfo n;
  RdmaDevice d;
  d.name = "mlx5_0";
  d.numa_node = 0;
  RdmaPort p;
  p.port = 1;
  p.rate_gbps = 400.0;
  p.counters["symbol_error"] = 7;
  d.ports.push_back(p);
  n.rdma_devices.push_back(d);
  const json j = n;
  auto error_of = [](const json& doc) -> std::string {
    try {
      doc.get<NodeInfo>();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of(j), "");
  json c = j;
  c["rdma_devices"][0]["ports"][0]["counters"]["symbol_error"] = -5;
  EXPECT_EQ(error_of(c), "field 'rdma_devices[0].ports[0].counters.symbol_error' is -5: counters, rates, sizes "
                         "and ids are not negative");
  json r = j;
  r["rdma_devices"][0]["ports"][0]["rate_gbps"] = -100.0;
  EXPECT_EQ(error_of(r), "field 'rdma_devices[0].ports[0].rate_gbps' is -100.0, not a rate or speed (negative)");
  json port = j;
  port["rdma_devices"][0]["ports"][0]["port"] = -1;
  EXPECT_NE(error_of(port).find("'rdma_devices[0].ports[0].port' is -1"), std::string::npos);
  // The kernel's "no NUMA node" is -1: kept.
  json numa = j;
  numa["rdma_devices"][0]["numa_node"] = -1;
  EXPECT_EQ(error_of(numa), "");
}

TEST(NodeInfo, FloatsInIntegerFieldsAreRefusedNamingTheField) {
  NodeInfo n;
  RdmaDevice d;
  d.name = "mlx5_0";
  RdmaPort p;
  p.port = 1;
  p.rate_gbps = 400.0;
  p.counters["port_rcv_data"] = 7;
  d.ports.push_back(p);
  n.rdma_devices.push_back(d);
  json j = n;
  EXPECT_NO_THROW(j.get<NodeInfo>());  // rate_gbps is a float field
  json big = j;
  big["rdma_devices"][0]["ports"][0]["counters"]["port_rcv_data"] = json::parse("4734888888888888888888888");
  try {
    big.get<NodeInfo>();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("field 'rdma_devices[0].ports[0].counters.port_rcv_data' is 4.73"),
              std::string::npos)
        << e.what();
  }
  json half = j;
  half["rdma_devices"][0]["ports"][0]["port"] = 1.5;
  EXPECT_THROW(half.get<NodeInfo>(), Error);
  json version = j;
  version["schema_version"] = 1e300;
  EXPECT_THROW(version.get<NodeInfo>(), Error);
  json deep = json::array();
  for (int i = 0; i < 40; ++i) deep = json::array({deep});
  json nested = j;
  nested["gpus"] = deep;
  EXPECT_THROW(nested.get<NodeInfo>(), Error);
}

TEST(NodeInfo, RejectsOtherSchema) {
  json j = {{"schema", "something.else"}};
  EXPECT_THROW(j.get<NodeInfo>(), Error);
}
