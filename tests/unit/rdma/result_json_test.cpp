// rdma::result_from_json: the one reader of a saved fabscope.rdma result (report reads it too).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "rdma/types.hpp"
#include "support/fixtures.hpp"

namespace fabscope::rdma {
namespace {

json saved_result(const std::string& name) {
  std::ifstream in(fabscope::testing::fixture("rdma-vm/" + name));
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

std::string result_error(const json& j) {
  try {
    (void)result_from_json("r.json", j);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(RdmaResultJson, SavedBwResult_ReadsAsWritten) {
  const Result r = result_from_json("r.json", saved_result("write-bw-64k.client.json"));
  EXPECT_EQ(r.role, "client");
  EXPECT_EQ(r.options.test, fabscope::rdma::Test::Bw);
  EXPECT_EQ(r.options.op, Op::Write);
  EXPECT_EQ(r.local.device, "rxe1");
  EXPECT_TRUE(r.local.software);
  ASSERT_EQ(r.sizes.size(), 1u);
  EXPECT_EQ(r.sizes[0].bytes, 65536u);
  EXPECT_EQ(r.sizes[0].data_verified, true);
  EXPECT_TRUE(r.completed);
  // What it read writes back the same.
  EXPECT_EQ(json(r), saved_result("write-bw-64k.client.json"));
}

TEST(RdmaResultJson, Errors_NameTheFileAndTheField) {
  json j = saved_result("write-lat-8.client.json");
  j["sizes"][0]["gbps"] = "fast";
  EXPECT_EQ(result_error(j), "r.json: field 'sizes[0].gbps': expected a number, got string \"fast\"");
  j = saved_result("write-lat-8.client.json");
  j["options"]["oob"] = "udp";
  EXPECT_EQ(result_error(j), "r.json: field 'options.oob': expected \"cm\" or \"tcp\", got \"udp\"");
  j = saved_result("write-lat-8.client.json");
  j["local"]["lid"] = -1;
  EXPECT_EQ(result_error(j), "r.json: field 'local.lid': out of range: -1");
  j["schema_version"] = 2;
  EXPECT_EQ(result_error(j), "r.json: field 'schema_version': this fabscope reads versions 1 to 1, got 2");
}

}  // namespace
}  // namespace fabscope::rdma
