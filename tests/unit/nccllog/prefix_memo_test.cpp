// PrefixMemo hands a line the host, pid, tid and device of a remembered prefix instead of
// parsing it again. It must give exactly what read_prefix gives, on every line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "nccllog/parser.hpp"
#include "support/fixtures.hpp"

using namespace fabscope::nccllog;

namespace {

// Reads `lines` in order through one memo and compares each with a fresh read_prefix.
int compare_all(const std::vector<std::string>& lines, const std::string& where) {
  PrefixMemo memo;
  int n = 0;
  for (const std::string& raw : lines) {
    Line plain, memoed;
    if (!scan_line(raw, plain)) continue;
    scan_line(raw, memoed);
    read_prefix(plain);
    memo.read(memoed);
    ++n;
    EXPECT_EQ(memoed.host, plain.host) << where << ": " << raw;
    EXPECT_EQ(memoed.pid, plain.pid) << where << ": " << raw;
    EXPECT_EQ(memoed.tid, plain.tid) << where << ": " << raw;
    EXPECT_EQ(memoed.cuda_dev, plain.cuda_dev) << where << ": " << raw;
    EXPECT_EQ(memoed.source, plain.source) << where << ": " << raw;
    // The views point into this line, never into an earlier one.
    if (!memoed.host.empty()) {
      EXPECT_GE(memoed.host.data(), raw.data());
      EXPECT_LE(memoed.host.data() + memoed.host.size(), raw.data() + raw.size());
    }
  }
  return n;
}

}  // namespace

TEST(PrefixMemo, GivesWhatReadPrefixGivesOnEveryShippedLogLine) {
  namespace fs = std::filesystem;
  int n = 0;
  for (const auto& entry : fs::recursive_directory_iterator(fabscope::testing::fixture("nccl-logs"))) {
    if (!entry.is_regular_file() || entry.path().extension() != ".log") continue;
    std::ifstream in(entry.path());
    std::vector<std::string> lines;
    for (std::string raw; std::getline(in, raw);) lines.push_back(raw);
    n += compare_all(lines, entry.path().filename().string());
  }
  EXPECT_GT(n, 2000);
}

TEST(PrefixMemo, InterleavedProcessesTimestampsAndTagsKeepTheirOwnFields) {
  const std::vector<std::string> lines = {
      "2024-05-01 10:11:12.345 node-a:101:201 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
      "2024-05-01 10:11:12.346 node-b:102:202 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/IPC",
      "2024-05-01 10:11:12.347 node-a:101:201 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/IPC",
      // the same tail after an mpirun tag glued to the host: the host is what follows the tag
      "[1,0]<stdout>:node-a:101:201 [0] NCCL INFO Channel 02/0 : 0[0] -> 1[1] via P2P/IPC",
      "xnode-a:101:201 [0] NCCL INFO Channel 03/0 : 0[0] -> 1[1] via P2P/IPC",
      "node-a:101:201 [0] NCCL INFO Channel 04/0 : 0[0] -> 1[1] via P2P/IPC",
      // one digit more in the pid: a different process, even though the last bytes agree
      "node-a:1101:201 [0] NCCL INFO Channel 05/0 : 0[0] -> 1[1] via P2P/IPC",
      "node-a:101:201 [0] transport.cc:10 NCCL INFO Channel 06/0 : 0[0] -> 1[1] via P2P/IPC",
      "node-a:101:201 [0] misc/socket.cc:50 NCCL WARN Net : Connect to 10.0.0.2<4321> failed",
  };
  EXPECT_EQ(compare_all(lines, "inline"), static_cast<int>(lines.size()));
}
