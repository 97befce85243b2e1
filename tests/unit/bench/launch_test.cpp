// Launcher detection from the environment: local, MPI (Open MPI, PMI, PMIx), torchrun.
#include <gtest/gtest.h>

#include <map>

#include "bench/launch.hpp"
#include "core/error.hpp"

using namespace fabscope::bench;

namespace {
EnvFn env(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

std::map<std::string, std::string> torchrun_env() {
  return {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"},
          {"MASTER_ADDR", "10.0.0.5"}, {"MASTER_PORT", "29500"}, {"TORCHELASTIC_RUN_ID", "none"}};
}
}  // namespace

TEST(Launch, NoLauncherVariablesMeansLocal) {
  auto l = detect_launch(Launcher::Auto, env({}));
  EXPECT_EQ(l.kind, Launcher::Local);
}

TEST(Launch, OpenMpiVariables) {
  auto l = detect_launch(Launcher::Auto, env({{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "3"},
                                              {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}));
  EXPECT_EQ(l.kind, Launcher::Mpi);
  EXPECT_EQ(l.world, 4);
  EXPECT_EQ(l.rank, 3);
  EXPECT_EQ(l.local_rank, 1);
  EXPECT_EQ(l.evidence, "OMPI_COMM_WORLD_SIZE=4");
}

TEST(Launch, PmiAndPmixVariables) {
  EXPECT_EQ(detect_launch(Launcher::Auto, env({{"PMI_SIZE", "2"}, {"PMI_RANK", "0"}})).kind, Launcher::Mpi);
  EXPECT_EQ(detect_launch(Launcher::Auto, env({{"PMIX_RANK", "0"}})).kind, Launcher::Mpi);
}

TEST(Launch, TorchrunVariablesAndNcclCommIdOnTheNextPort) {
  auto l = detect_launch(Launcher::Auto, env(torchrun_env()));
  EXPECT_EQ(l.kind, Launcher::Torchrun);
  EXPECT_EQ(l.rank, 1);
  EXPECT_EQ(l.world, 2);
  EXPECT_EQ(l.local_rank, 1);
  EXPECT_EQ(l.nccl_comm_id, "10.0.0.5:29501");
  EXPECT_FALSE(l.comm_id_from_user);
}

TEST(Launch, NcclPortOverride) {
  EXPECT_EQ(detect_launch(Launcher::Auto, env(torchrun_env()), 40000).nccl_comm_id, "10.0.0.5:40000");
}

TEST(Launch, Ipv6MasterAddressIsBracketed) {
  auto e = torchrun_env();
  e["MASTER_ADDR"] = "fd00::5";
  EXPECT_EQ(detect_launch(Launcher::Auto, env(e)).nccl_comm_id, "[fd00::5]:29501");
}

TEST(Launch, UsersNcclCommIdIsKept) {
  auto e = torchrun_env();
  e["NCCL_COMM_ID"] = "node1:5555";
  auto l = detect_launch(Launcher::Auto, env(e));
  EXPECT_EQ(l.nccl_comm_id, "node1:5555");
  EXPECT_TRUE(l.comm_id_from_user);
}

TEST(Launch, TorchrunMissingVariablesAreNamed) {
  auto e = torchrun_env();
  e.erase("LOCAL_RANK");
  e.erase("MASTER_PORT");
  try {
    detect_launch(Launcher::Auto, env(e));
    FAIL();
  } catch (const fabscope::UsageError& ex) {
    std::string m = ex.what();
    EXPECT_NE(m.find("LOCAL_RANK, MASTER_PORT"), std::string::npos) << m;
  }
}

TEST(Launch, RankOutsideTheWorldIsRefused) {
  auto e = torchrun_env();
  e["RANK"] = "2";
  EXPECT_THROW(detect_launch(Launcher::Auto, env(e)), fabscope::UsageError);
  e = torchrun_env();
  e["WORLD_SIZE"] = "0";
  EXPECT_THROW(detect_launch(Launcher::Auto, env(e)), fabscope::UsageError);
  e = torchrun_env();
  e["LOCAL_WORLD_SIZE"] = "4";  // more ranks on the node than in the job
  EXPECT_THROW(detect_launch(Launcher::Auto, env(e)), fabscope::UsageError);
  EXPECT_THROW(detect_launch(Launcher::Auto, env({{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_RANK", "5"}})),
               fabscope::UsageError);
}

TEST(Launch, BadPortAndNonNumbersAreRefused) {
  auto e = torchrun_env();
  e["MASTER_PORT"] = "0";
  EXPECT_THROW(detect_launch(Launcher::Auto, env(e)), fabscope::UsageError);
  e["MASTER_PORT"] = "65535";  // +1 would not be a port
  EXPECT_THROW(detect_launch(Launcher::Auto, env(e)), fabscope::UsageError);
  e = torchrun_env();
  e["RANK"] = "one";
  EXPECT_THROW(detect_launch(Launcher::Auto, env(e)), fabscope::UsageError);
}

TEST(Launch, BothLaunchersSetNeedsAChoice) {
  auto e = torchrun_env();
  e["OMPI_COMM_WORLD_SIZE"] = "2";
  EXPECT_THROW(detect_launch(Launcher::Auto, env(e)), fabscope::UsageError);
  EXPECT_EQ(detect_launch(Launcher::Torchrun, env(e)).kind, Launcher::Torchrun);
  EXPECT_EQ(detect_launch(Launcher::Mpi, env(e)).kind, Launcher::Mpi);
}

TEST(Launch, ForcedLocalIgnoresTheEnvironment) {
  EXPECT_EQ(detect_launch(Launcher::Local, env(torchrun_env())).kind, Launcher::Local);
}
