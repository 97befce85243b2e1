// Text from other machines, logs and files reaches the terminal as text: a terminal escape
// sequence (ESC [ 2 J clears the screen, ESC ] 0 ; sets the window title, BEL rings) in a saved
// probe or an NCCL log is printed with '?' for each control byte, by every human output.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/json.hpp"
#include "support/cli_run.hpp"
#include "support/fixtures.hpp"

using fabscope::json;
using fabscope::testing::quote;
using fabscope::testing::run_fabscope;

namespace {

// No byte below 0x20 but the newline, no DEL.
void expect_no_control_bytes(const std::string& out, const std::string& what) {
  for (char c : out) {
    const auto b = static_cast<unsigned char>(c);
    EXPECT_TRUE((b >= 0x20 && b != 0x7f) || c == '\n') << what << ": control byte " << int(b) << " in:\n" << out;
  }
}

json golden_probe() {
  std::ifstream in(std::filesystem::path(FABSCOPE_SOURCE_DIR) / "tests/golden/probe/procfs-infiniband.json");
  return json::parse(in);
}

}  // namespace

TEST(EscapesCli, CheckOfASavedProbePrintsNoControlBytes) {
  json j = golden_probe();
  j["hostname"] = "evil\x1b]0;owned\x07host\x1b[2J";
  j["rdma_devices"][0]["ports"][0]["state"] = "DOWN\x1b[31m";
  j["rdma_devices"][0]["ports"][0]["state_code"] = 1;
  fabscope::testing::TempDir t;
  fabscope::testing::write_file(t.path(), "node.json", j.dump(2));
  const std::string file = quote((t.path() / "node.json").string());
  auto r = run_fabscope("check --node " + file);
  EXPECT_LE(r.exit_code, 2) << r.out;  // judged, not refused
  expect_no_control_bytes(r.out, "check --node");
  EXPECT_NE(r.out.find("evil?]0;owned?host?[2J"), std::string::npos) << r.out;
}

TEST(EscapesCli, LogPrintsHostNamesAndWarnTextAsText) {
  fabscope::testing::TempDir t;
  fabscope::testing::write_file(
      t.path(), "nccl.log",
      "evil\x1b]0;owned\x07host:941227:943077 [0] include/socket.h:390 NCCL WARN Connect to 10.38.10.112<21724> "
      "failed : \x1b[2JConnection refused\n"
      "evil\x1b]0;owned\x07host:941227:943077 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n");
  auto r = run_fabscope("log --hosts " + quote((t.path() / "nccl.log").string()));
  EXPECT_LE(r.exit_code, 2) << r.out;
  expect_no_control_bytes(r.out, "log");
  EXPECT_NE(r.out.find("evil?]0;owned?host"), std::string::npos) << r.out;
}

TEST(EscapesCli, ErrorMessagesQuotingAFileValueAreText) {
  fabscope::testing::TempDir t;
  fabscope::testing::write_file(t.path(), "bad.json", "{\"schema\": \"\\u001b]0;owned\\u0007\"}");
  auto r = run_fabscope("report " + quote((t.path() / "bad.json").string()) + " -o " +
                        quote((t.path() / "r.html").string()));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  expect_no_control_bytes(r.out, "report error");
}
