// `fabscope job status --fabric`: a saved read of a job (fabscope.job-records) whose rank on
// H-node3 sends slowly to every peer, located in the real saved sweep of
// tests/fixtures/fabric-ibsim-routes (OpenSM's forwarding tables): the host cable of H-node3.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/json.hpp"
#include "support/cli_run.hpp"
#include "support/fixtures.hpp"

using fabscope::json;
using fabscope::testing::fixture;
using fabscope::testing::quote;
using fabscope::testing::run_fabscope;
using fabscope::testing::TempDir;
using fabscope::testing::write_file;

namespace {

// Six ranks, one per host H-node1..6; every rank sends to every other 1,000 network steps of
// 1 MiB at 100 Gb/s, rank 2 (H-node3) at 10 Gb/s.
std::string records() {
  const std::uint64_t now = 1'800'000'000'000'000'000ull;
  json ranks = json::array();
  for (int r = 0; r < 6; ++r) {
    json peers = json::array();
    for (int p = 0; p < 6; ++p) {
      if (p == r) continue;
      const std::uint64_t bytes = 1000ull << 20;
      const double gbps = r == 2 ? 10 : 100;
      const auto wait = static_cast<std::uint64_t>(8.0 * static_cast<double>(bytes) / gbps);
      peers.push_back({{"peer", p}, {"direction", "send"}, {"steps", 1000}, {"bytes", bytes}, {"step_ns", wait},
                       {"wait_ns", wait}});
    }
    ranks.push_back({{"job_id", "j7"}, {"host", "H-node" + std::to_string(r + 1)}, {"pid", 100 + r}, {"alive", true},
                     {"now_unix_ns", now}, {"comm", "00000000c0ffee00"}, {"comm_name", "world"}, {"rank", r},
                     {"nranks", 6}, {"gpu", 0}, {"started", 50}, {"completed", 50},
                     {"last_start_unix_ns", now - 1000}, {"last_done_unix_ns", now - 500}, {"ops", json::array()},
                     {"peers", peers}});
  }
  return json{{"schema", "fabscope.job-records"}, {"schema_version", 1}, {"source", "test"}, {"errors", json::array()},
              {"ranks", ranks}}
      .dump();
}

const std::string kFabric = (fixture("fabric-ibsim-routes") / "fabric.json").string();

TEST(JobCli, FabricNamesTheHostCableTheSlowConnectionsShare) {
  TempDir t;
  write_file(t.path(), "job.json", records());
  const std::string from = quote((t.path() / "job.json").string());
  auto r = run_fabscope("job status --from " + from + " --fabric " + quote(kFabric) + " --json", "", false);
  ASSERT_EQ(r.exit_code, 1) << r.out;
  const json j = json::parse(r.out);
  ASSERT_EQ(j.at("located").size(), 1u) << r.out;
  const auto& l = j["located"][0]["localization"];
  EXPECT_TRUE(l["attempted"].get<bool>());
  EXPECT_EQ(l["slow"], 5);
  EXPECT_EQ(l["fast"], 25);
  EXPECT_EQ(l["suspects"][0]["kind"], "host_cable");
  EXPECT_EQ(l["suspects"][0]["name"], "H-node3:1 -> S-leaf1:3");
  EXPECT_EQ(j["comms"][0]["slow_connection"]["from"], 2);
  bool slow_path = false;
  for (const auto& f : j["findings"]) slow_path = slow_path || f["id"] == "job.slow_path";
  EXPECT_TRUE(slow_path) << r.out;

  auto text = run_fabscope("job status --from " + from + " --fabric " + quote(kFabric));
  EXPECT_EQ(text.exit_code, 1) << text.out;
  EXPECT_NE(text.out.find("WARN job.slow_path"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("the slow connections share the host cable H-node3:1 -> S-leaf1:3"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("5 slow and 25 other connection(s) routed"), std::string::npos) << text.out;
}

TEST(JobCli, FabricAndRailsUsageErrors) {
  TempDir t;
  write_file(t.path(), "job.json", records());
  const std::string from = quote((t.path() / "job.json").string());
  auto no_fabric = run_fabscope("job status --from " + from + " --rails 0=mlx5_0");
  EXPECT_EQ(no_fabric.exit_code, 3) << no_fabric.out;
  EXPECT_NE(no_fabric.out.find("--rails goes with --fabric"), std::string::npos) << no_fabric.out;
  auto bad_rails = run_fabscope("job status --from " + from + " --fabric " + quote(kFabric) + " --rails 0mlx5");
  EXPECT_EQ(bad_rails.exit_code, 3) << bad_rails.out;
  EXPECT_NE(bad_rails.out.find("'0mlx5' is not GPU=HCA"), std::string::npos) << bad_rails.out;
  // A sweep saved without forwarding tables cannot route: refused, naming the file.
  const std::string no_routes = (fixture("fabric-leaf-spine") / "fabric.json").string();
  auto r = run_fabscope("job status --from " + from + " --fabric " + quote(no_routes));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("no forwarding tables"), std::string::npos) << r.out;
  auto missing = run_fabscope("job status --from " + from + " --fabric /nonexistent/fabric.json");
  EXPECT_EQ(missing.exit_code, 3) << missing.out;
  EXPECT_NE(missing.out.find("/nonexistent/fabric.json"), std::string::npos) << missing.out;
  auto ras = run_fabscope("job status --ras localhost:1 --fabric " + quote(kFabric));
  EXPECT_EQ(ras.exit_code, 3) << ras.out;
}

}  // namespace
