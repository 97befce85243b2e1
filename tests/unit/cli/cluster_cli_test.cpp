// `fabscope cluster --engine nccl` in a build without CUDA: refused before any node joins, with
// the reason and the alternatives, exit 3.
#include <gtest/gtest.h>

#include "support/cli_run.hpp"

using fabscope::testing::run_fabscope;

TEST(ClusterCli, EngineNcclIsRefusedWithTheReasonInABuildWithoutCuda) {
  const auto r = run_fabscope("cluster --engine nccl --pairs all --launcher env --timeout 1",
                              "RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 FABSCOPE_CLUSTER_TOKEN=t");
#if FABSCOPE_TEST_HAVE_CUDA
  EXPECT_EQ(r.out.find("built without CUDA"), std::string::npos) << r.out;
#else
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("--engine nccl: this fabscope was built without CUDA and NCCL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--engine tcp or rdma"), std::string::npos) << r.out;
#endif
}

TEST(ClusterCli, EngineHelpNamesNcclWithAnExample) {
  const auto r = run_fabscope("cluster --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--engine nccl"), std::string::npos) << r.out;
}

// A result saved by fabscope 0.1.0 (schema v1, before rdma_address and the other later keys)
// reads back: every cluster fixture, exit 0 (no finding), never 3.
TEST(ClusterCli, FromAResultOfFabscope010_ReadsBack) {
  for (const char* f : {"vm5-slow-node.json", "mpirun4-port-down.json", "mpirun4-mtu.json"}) {
    const auto r = run_fabscope(std::string("cluster --from ") + FABSCOPE_TEST_FIXTURES + "/cluster-runs/" + f);
    EXPECT_EQ(r.exit_code, 0) << f << "\n" << r.out;
    EXPECT_EQ(r.out.find(": missing"), std::string::npos) << f << "\n" << r.out;
  }
  const auto r = run_fabscope(std::string("cluster --from ") + FABSCOPE_TEST_FIXTURES + "/cluster-runs/vm5-slow-node.json");
  EXPECT_NE(r.out.find("5 node(s), 10 pair(s) over tcp"), std::string::npos) << r.out;
}
