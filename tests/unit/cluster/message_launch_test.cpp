// The wire format and the launch environment: bad input is refused with a reason, never trusted.
#include <gtest/gtest.h>

#include <map>

#include "cluster/launch.hpp"
#include "cluster/message.hpp"
#include "core/error.hpp"

using namespace fabscope;
using namespace fabscope::cluster;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

EnvFn env_of(std::map<std::string, std::string> m) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(m));
  return [shared](const char* n) -> const char* {
    auto it = shared->find(n);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

}  // namespace

TEST(Message, HeaderRoundTrips) {
  auto b = encode_header({MessageType::Data, 77, 1234});
  Header h = parse_header(b.data(), b.size(), "peer");
  EXPECT_EQ(h.type, MessageType::Data);
  EXPECT_EQ(h.rank, 77u);
  EXPECT_EQ(h.payload_bytes, 1234u);
}

TEST(Message, GarbageOversizeAndOtherVersionsAreRefusedNamingThePeer) {
  const unsigned char http[] = "GET / HTTP/1.1\r\n";
  EXPECT_NE(error_of([&] { parse_header(http, 16, "10.0.0.9:5000"); }).find("10.0.0.9:5000: not a fabscope"),
            std::string::npos);
  auto b = encode_header({MessageType::Data, 1, 0});
  b[12] = 0x7f;  // 2 GiB payload
  EXPECT_NE(error_of([&] { parse_header(b.data(), b.size(), "p"); }).find("more than"), std::string::npos);
  b = encode_header({MessageType::Data, 1, 0});
  b[4] = 9;
  EXPECT_NE(error_of([&] { parse_header(b.data(), b.size(), "p"); }).find("protocol version 9"), std::string::npos);
  b = encode_header({MessageType::Data, 1, 0});
  b[5] = 0;
  EXPECT_NE(error_of([&] { parse_header(b.data(), b.size(), "p"); }).find("unknown message type"), std::string::npos);
  EXPECT_FALSE(error_of([&] { parse_header(b.data(), 3, "p"); }).empty());
}

TEST(Message, HelloFieldsAreTypeCheckedAndBounded) {
  Hello h{"tok", "0.1.0", 3, 8, "gpu3"};
  Hello back = parse_hello(encode_hello(h), "p");
  EXPECT_EQ(back.name, "gpu3");
  EXPECT_EQ(back.rank, 3);
  EXPECT_NE(error_of([] { parse_hello("{\"token\":1}", "p"); }).find("'token'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_hello("[]", "p"); }).find("not a JSON object"), std::string::npos);
  EXPECT_NE(error_of([] {
              parse_hello(R"({"token":"t","fabscope_version":"v","rank":-1,"world":2,"name":"n"})", "p");
            }).find("out of range"),
            std::string::npos);
  EXPECT_FALSE(error_of([] { parse_hello("{\"token\":\"" + std::string(300, 'x') + "\"}", "p"); }).empty());
}

TEST(Message, PairPlanFieldsAreTypeCheckedNamingTheField) {
  const json good = json::parse(
      R"({"joined":[0,2],"offers":[["a","10.0.0.1","",""],["b","10.0.0.2","10.0.0.2","rdma ok"]],)"
      R"("mode":"random:3","seed":7,"pair_secret":"00112233445566778899aabbccddeeff"})");
  const PairPlan p = parse_plan(good);
  EXPECT_EQ(p.pair_secret, "00112233445566778899aabbccddeeff");
  EXPECT_EQ(p.joined, (std::vector<int>{0, 2}));
  ASSERT_EQ(p.offers.size(), 2u);
  EXPECT_EQ(p.offers[1][3], "rdma ok");
  EXPECT_EQ(p.mode, "random:3");
  EXPECT_EQ(p.seed, 7u);
  auto refused = [&](const char* key, const json& value, const std::string& says) {
    json j = good;
    j[key] = value;
    try {
      parse_plan(j);
      ADD_FAILURE() << key << " = " << value.dump();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  // Floats in integer fields were a plain conversion (undefined behaviour beyond the range).
  refused("joined", json::array({0, 1.4e138}), "holds 1.4e+138, not a rank");
  refused("joined", json::array({0, -1}), "not a rank");
  refused("seed", 1e300, "'seed' is 1e+300");
  refused("seed", -3, "not an unsigned integer");
  refused("offers", json::array({json::array({"a", "b", "c"}), json::array({"a", "b", "c", "d"})}), "not 4 or 6 strings");
  refused("offers", json::array({json::array({"a", 1, "c", "d"}), json::array({"a", "b", "c", "d"})}), "not a string");
  refused("offers", json::array({json::array({"a", "b", "c", "d"})}), "differ in number");
  refused("mode", 3, "'mode' is not a string");
  refused("pair_secret", "short", "'pair_secret' is not 16 to 128 hex digits");
  refused("pair_secret", std::string(129, 'a'), "'pair_secret' is not 16 to 128 hex digits");
  refused("pair_secret", "00112233445566778899aabbccddeeXX", "'pair_secret' is not 16 to 128 hex digits");
  json missing = good;
  missing.erase("seed");
  EXPECT_THROW(parse_plan(missing), Error);
}

TEST(Message, PairPlanOffersCarryTheNcclDeviceAndNoteOrLeaveThemEmpty) {
  const json six = json::parse(
      R"({"joined":[0,1],"offers":[["a","","","","GPU 0 H100, NCCL 2.28.3",""],["b","","","","","no CUDA GPU"]],)"
      R"("mode":"all","seed":1,"pair_secret":"00112233445566778899aabbccddeeff"})");
  const PairPlan p = parse_plan(six);
  EXPECT_EQ(p.offers[0][4], "GPU 0 H100, NCCL 2.28.3");
  EXPECT_EQ(p.offers[1][5], "no CUDA GPU");
  const json four = json::parse(
      R"({"joined":[0],"offers":[["a","10.0.0.1:1","",""]],"mode":"all","seed":1,)"
      R"("pair_secret":"00112233445566778899aabbccddeeff"})");
  const PairPlan old = parse_plan(four);
  EXPECT_EQ(old.offers[0][1], "10.0.0.1:1");
  EXPECT_EQ(old.offers[0][4], "");
  EXPECT_EQ(old.offers[0][5], "");
  json five = four;
  five["offers"][0].push_back("x");
  EXPECT_THROW(parse_plan(five), Error);
}

TEST(Message, TokenComparison) {
  EXPECT_TRUE(token_equal("12345", "12345"));
  EXPECT_FALSE(token_equal("12345", "12346"));
  EXPECT_FALSE(token_equal("1234", "12345"));
  EXPECT_FALSE(token_equal("", "x"));
}

TEST(Launch, EnvContractWithTokenFromSlurm) {
  auto l = detect_launch("auto", env_of({{"RANK", "2"}, {"WORLD_SIZE", "4"}, {"MASTER_ADDR", "n0"},
                                          {"MASTER_PORT", "29400"}, {"SLURM_JOB_ID", "777"}}));
  EXPECT_EQ(l.kind, "env");
  EXPECT_EQ(l.rank, 2);
  EXPECT_EQ(l.world, 4);
  EXPECT_EQ(l.port, 29400);
  EXPECT_EQ(l.token, "777");
  EXPECT_EQ(l.token_source, "SLURM_JOB_ID");  // no secret: the command warns
  l = detect_launch("auto", env_of({{"RANK", "2"}, {"WORLD_SIZE", "4"}, {"MASTER_ADDR", "n0"}, {"MASTER_PORT", "29400"},
                                    {"SLURM_JOB_ID", "777"}, {"FABSCOPE_CLUSTER_TOKEN", "s3cret"}}));
  EXPECT_EQ(l.token, "s3cret");
  EXPECT_EQ(l.token_source, "FABSCOPE_CLUSTER_TOKEN");
}

TEST(Launch, TorchrunMovesOffItsStorePortAndIndexedJobsUseTheCompletionIndex) {
  auto l = detect_launch("auto", env_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "n0"},
                                          {"MASTER_PORT", "29500"}, {"TORCHELASTIC_RUN_ID", "x"},
                                          {"FABSCOPE_CLUSTER_TOKEN", "t"}}));
  EXPECT_EQ(l.port, 29502);
  l = detect_launch("env", env_of({{"JOB_COMPLETION_INDEX", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "n0"},
                                   {"MASTER_PORT", "29500"}, {"FABSCOPE_CLUSTER_TOKEN", "t"}}));
  EXPECT_EQ(l.rank, 1);
}

TEST(Launch, MpiAndErrorsNameTheVariable) {
  auto l = detect_launch("auto", env_of({{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "3"}}));
  EXPECT_EQ(l.kind, "mpi");
  EXPECT_EQ(l.rank, 3);
  EXPECT_NE(error_of([] { detect_launch("auto", env_of({})); }).find("no launcher"), std::string::npos);
  EXPECT_NE(error_of([] {
              detect_launch("auto", env_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "n0"},
                                            {"MASTER_PORT", "29500"}}));
            }).find("FABSCOPE_CLUSTER_TOKEN"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              detect_launch("auto", env_of({{"RANK", "5"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "n0"},
                                            {"MASTER_PORT", "1"}, {"FABSCOPE_CLUSTER_TOKEN", "t"}}));
            }).find("rank 5"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              detect_launch("auto", env_of({{"RANK", "x"}, {"WORLD_SIZE", "2"}}));
            }).find("RANK='x'"),
            std::string::npos);
  EXPECT_THROW(detect_launch("mpi", env_of({})), UsageError);
}

TEST(Hostlist, ExpandsSlurmSyntaxKeepingZeroPadding) {
  EXPECT_EQ(expand_hostlist("gpu[01-03,07],login1"),
            (std::vector<std::string>{"gpu01", "gpu02", "gpu03", "gpu07", "login1"}));
  EXPECT_EQ(expand_hostlist("a,b"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(expand_hostlist("n[8-10]-ib"), (std::vector<std::string>{"n8-ib", "n9-ib", "n10-ib"}));
  EXPECT_THROW(expand_hostlist("gpu[3-1]"), UsageError);
  EXPECT_THROW(expand_hostlist("gpu[1-2"), UsageError);
  EXPECT_THROW(expand_hostlist("gpu[a-b]"), UsageError);
  EXPECT_THROW(expand_hostlist("gpu[1-999999]"), UsageError);
}
