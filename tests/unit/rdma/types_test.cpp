// fabscope rdma's values: flag parsing helpers, option ranges and the fabscope.rdma JSON.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "rdma/engine.hpp"
#include "rdma/types.hpp"

using namespace fabscope;
using namespace fabscope::rdma;

TEST(RdmaTypes, ParseSize_AcceptsBytesAndBinaryUnits) {
  EXPECT_EQ(parse_size("65536"), 65536u);
  EXPECT_EQ(parse_size("64K"), 65536u);
  EXPECT_EQ(parse_size("64KiB"), 65536u);
  EXPECT_EQ(parse_size("8M"), 8u << 20);
  EXPECT_EQ(parse_size("1G"), 1u << 30);
}

TEST(RdmaTypes, ParseSize_RejectsTextNamingIt) {
  try {
    parse_size("64X");
    FAIL() << "no throw";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'64X'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_size("big"), UsageError);
  EXPECT_THROW(parse_size(""), UsageError);
}

TEST(RdmaTypes, ParseDevice_SplitsThePort) {
  auto [d, p] = parse_device("mlx5_1:2");
  EXPECT_EQ(d, "mlx5_1");
  EXPECT_EQ(p, 2);
  auto [d2, p2] = parse_device("rxe0");
  EXPECT_EQ(d2, "rxe0");
  EXPECT_FALSE(p2);
  EXPECT_THROW(parse_device("mlx5_0:x"), UsageError);
  EXPECT_THROW(parse_device(":1"), UsageError);
}

TEST(RdmaTypes, AllSizes_IsPerftestsSweep) {
  auto s = all_sizes();
  ASSERT_EQ(s.size(), 23u);
  EXPECT_EQ(s.front(), 2u);
  EXPECT_EQ(s.back(), 8u << 20);
}

TEST(RdmaTypes, Normalized_FillsPerftestDefaults) {
  Options bw = normalized(Options{});
  EXPECT_EQ(bw.sizes_bytes, std::vector<std::uint64_t>{65536});
  EXPECT_EQ(bw.iterations, 5000u);
  EXPECT_EQ(bw.tx_depth, 128);
  Options lat;
  lat.test = rdma::Test::Lat;
  lat = normalized(lat);
  EXPECT_EQ(lat.sizes_bytes, std::vector<std::uint64_t>{2});
  EXPECT_EQ(lat.iterations, 1000u);
  EXPECT_EQ(lat.tx_depth, 1);
}

TEST(RdmaTypes, Normalized_RejectsOutOfRangeNamingTheFlag) {
  Options o;
  o.qps = 65;
  try {
    normalized(o);
    FAIL() << "no throw";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--qps 65"), std::string::npos) << e.what();
  }
  Options b;
  b.test = rdma::Test::Lat;
  b.bidirectional = true;
  EXPECT_THROW(normalized(b), UsageError);
  Options q;
  q.test = rdma::Test::Lat;
  q.qps = 2;
  EXPECT_THROW(normalized(q), UsageError);
  Options t;
  t.timeout_s = 0;
  EXPECT_THROW(normalized(t), UsageError);
}

TEST(RdmaTypes, Result_RoundTripsThroughJsonWithSchema) {
  Result r;
  r.role = "client";
  r.options = normalized(Options{});
  r.local.device = "rxe1";
  r.local.gid_index = 1;
  r.remote.device = "rxe0";
  r.choices.push_back({"device", "rxe1:1", "netdev veth1 holds 10.9.0.2"});
  SizeResult s;
  s.bytes = 65536;
  s.iterations = 5000;
  s.total_bytes = 65536ull * 5000;
  s.seconds = 1.5;
  s.latency = LatencyStats{1, 2, 3, 4, 2.5};
  s.data_verified = true;
  r.sizes.push_back(s);
  r.completed = true;
  json j = r;
  EXPECT_EQ(j["schema"], "fabscope.rdma");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["options"]["op"], "write");
  Result back = j.get<Result>();
  EXPECT_EQ(back.local.device, "rxe1");
  EXPECT_EQ(back.sizes.at(0).total_bytes, s.total_bytes);
  EXPECT_EQ(back.sizes.at(0).latency->p99_us, 3);
  EXPECT_EQ(back.choices.at(0).reason, "netdev veth1 holds 10.9.0.2");
}

TEST(RdmaTypes, Result_RejectsAnotherSchema) {
  json j = {{"schema", "fabscope.check"}, {"schema_version", 1}};
  EXPECT_THROW(j.get<Result>(), Error);
}

// Found by the rdma_control fuzz target (tests/fuzz/regressions/rdma_control): a peer's float
// where an integer belongs went through nlohmann's unchecked conversion (undefined beyond the
// type's range). Every integer the peer sends is now range-checked and refused by name.
TEST(RdmaTypes, PeerIntegers_FloatsAndOutOfRangeAreRefusedByName) {
  auto error_of = [](const json& j) -> std::string {
    try {
      (void)j.get<BufKey>();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of(json::parse(R"({"addr":1.4e138,"rkey":1,"stride":8})")).find("'addr'"), std::string::npos);
  EXPECT_NE(error_of(json::parse(R"({"addr":1,"rkey":4294967296,"stride":8})")).find("'rkey'"), std::string::npos);
  EXPECT_NE(error_of(json::parse(R"({"addr":1,"rkey":-1,"stride":8})")).find("'rkey'"), std::string::npos);
  BufKey k = json::parse(R"({"addr":18446744073709551615,"rkey":4294967295,"stride":8})").get<BufKey>();
  EXPECT_EQ(k.addr, 18446744073709551615ull);
  EXPECT_EQ(k.rkey, 4294967295u);
  EXPECT_THROW((void)json::parse(R"({"test":"bw","op":"write","sizes_bytes":[1e30],"iterations":1,"qps":1,"tx_depth":1})")
                   .get<Options>(),
               Error);
  Endpoint e = json::parse(R"({"port":2,"gid_index":null,"active_mtu":4096})").get<Endpoint>();
  EXPECT_EQ(e.port, 2);
  EXPECT_FALSE(e.gid_index.has_value());
  EXPECT_EQ(e.active_mtu, 4096);
  EXPECT_THROW((void)json::parse(R"({"port":1.5})").get<Endpoint>(), Error);
}
