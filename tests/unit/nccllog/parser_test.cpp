#include "nccllog/parser.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

using namespace fabscope::nccllog;

namespace {
// An Event's text fields view the line it came from (the parser copies nothing), so the lines
// stay alive for the whole test program (ASan found the views dangling on a temporary).
Event event_of(const std::string& raw) {
  static std::deque<std::string> kept;
  const std::string& line = kept.emplace_back(raw);
  Line l;
  EXPECT_TRUE(parse_line(line, l)) << line;
  return classify(l);
}

std::vector<std::string> split(LineReader& r, const std::vector<std::string>& chunks) {
  std::vector<std::string> out;
  auto cb = [&](std::string_view s) { out.emplace_back(s); };
  for (const auto& c : chunks) r.feed(c.data(), c.size(), cb);
  r.finish(cb);
  return out;
}
}  // namespace

TEST(ParseLine, ReadsHostPidTidAndDeviceOfInfoLine) {
  Line l;
  ASSERT_TRUE(parse_line("vm:639:654 [1] NCCL INFO cudaDriverVersion 13000", l));
  EXPECT_EQ(l.host, "vm");
  EXPECT_EQ(l.pid, 639);
  EXPECT_EQ(l.tid, 654);
  EXPECT_EQ(l.cuda_dev, 1);
  EXPECT_EQ(l.level, Level::Info);
  EXPECT_EQ(l.message, "cudaDriverVersion 13000");
}

TEST(ParseLine, WarnLineWithTimestampKeepsSourceLocation) {
  Line l;
  ASSERT_TRUE(parse_line(
      "[2026-11-22 18:27:22] vm:959:959 [0] bootstrap.cc:114 NCCL WARN Bootstrap : no socket interface found", l));
  EXPECT_EQ(l.level, Level::Warn);
  EXPECT_EQ(l.host, "vm");
  EXPECT_EQ(l.pid, 959);
  EXPECT_EQ(l.source, "bootstrap.cc:114");
  EXPECT_EQ(l.message, "Bootstrap : no socket interface found");
}

TEST(ParseLine, MpirunTagBeforeTheHostIsIgnored) {
  Line l;
  ASSERT_TRUE(parse_line("[56] crow-b-7:7240:7401 [0] NCCL INFO Using network IB", l));
  EXPECT_EQ(l.host, "crow-b-7");
  EXPECT_EQ(l.pid, 7240);
}

TEST(ParseLine, WarnQuotedWithoutPrefixHasNoHost) {
  Line l;
  ASSERT_TRUE(parse_line("misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error X", l));
  EXPECT_TRUE(l.host.empty());
  EXPECT_EQ(l.source, "misc/ibvwrap.cc:187");
}

TEST(ParseLine, BareVersionLineOfOldNcclIsRecognised) {
  Line l;
  ASSERT_TRUE(parse_line("NCCL version 2.18.5+cuda12.0", l));
  EXPECT_EQ(l.level, Level::Bare);
  Event e = classify(l);
  EXPECT_EQ(e.kind, EventKind::Version);
  EXPECT_EQ(e.name, "2.18.5+cuda12.0");
}

TEST(ParseLine, LinesWithoutNcclMarkerAreSkipped) {
  Line l;
  EXPECT_FALSE(parse_line("W1122 18:26:38.314000 596 torch/distributed/run.py:851] ****", l));
  EXPECT_FALSE(parse_line("", l));
  EXPECT_FALSE(parse_line("NCCL", l));
}

TEST(Classify, ChannelLineOfCurrentNcclGivesPeersAndTransport) {
  Event e = event_of("vm:640:640 [1] NCCL INFO Channel 07/1 : 1[1] -> 0[0] via P2P/CUMEM");
  ASSERT_EQ(e.kind, EventKind::Channel);
  EXPECT_EQ(e.channel, 7);
  EXPECT_EQ(e.from, 1);
  EXPECT_EQ(e.to, 0);
  EXPECT_EQ(e.name, "P2P/CUMEM");
}

TEST(Classify, NetChannelWithDirectionAndGdr) {
  Event e = event_of("h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA");
  ASSERT_EQ(e.kind, EventKind::Channel);
  EXPECT_EQ(e.to, 8);
  EXPECT_EQ(e.name, "NET/IB/0/GDRDMA");
}

TEST(Classify, OldChannelFormatWithBusIdsIsParsed) {
  Event e = event_of("h:1:2 [0] NCCL INFO Channel 01 : 2[c7000] -> 0[87000] [receive] via NET/IB/5/GDRDMA");
  ASSERT_EQ(e.kind, EventKind::Channel);
  EXPECT_EQ(e.from, 2);
  EXPECT_EQ(e.channel, 1);
}

TEST(Classify, RingListingIsNotAConnection) {
  EXPECT_EQ(event_of("vm:639:639 [0] NCCL INFO Channel 00/24 : 0 1").kind, EventKind::None);
}

TEST(Classify, CommInfoLineGivesTopology) {
  Event e = event_of("vm:767:767 [0] NCCL INFO comm 0xd60a470 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0");
  ASSERT_EQ(e.kind, EventKind::CommInfo);
  EXPECT_EQ(e.comm_ptr, 0xd60a470u);
  EXPECT_EQ(e.nranks, 2);
  EXPECT_EQ(e.nnodes, 2);
  EXPECT_EQ(e.local_ranks, 1);
}

TEST(Classify, InitCompleteCarriesCommId) {
  Event e = event_of(
      "vm:640:640 [1] NCCL INFO ncclCommInitRankConfig comm 0x449a1aa0 rank 1 nranks 2 cudaDev 1 nvmlDev 1 "
      "busId 70 commId 0xe481bfcc4c65d301 - Init COMPLETE");
  ASSERT_EQ(e.kind, EventKind::InitComplete);
  EXPECT_EQ(e.rank, 1);
  EXPECT_EQ(e.nranks, 2);
  EXPECT_EQ(e.comm_id, "0xe481bfcc4c65d301");
}

TEST(Classify, EnvOverrideDropsTrailingDot) {
  Event e = event_of("vm:1:1 [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to 0.");
  ASSERT_EQ(e.kind, EventKind::EnvOverride);
  EXPECT_EQ(e.name, "NCCL_NVLS_ENABLE");
  EXPECT_EQ(e.value, "0");
}

TEST(Classify, ErrorTraceGivesResultCode) {
  Event e = event_of("vm:959:959 [0] NCCL INFO init.cc:126 -> 5");
  ASSERT_EQ(e.kind, EventKind::ErrorTrace);
  EXPECT_EQ(e.number, 5);
}

TEST(Classify, UnknownWarnKeepsItsMessage) {
  Event e = event_of("h:1:1 [0] x.cc:1 NCCL WARN something nobody has seen");
  EXPECT_EQ(e.kind, EventKind::UnknownWarn);
  EXPECT_EQ(e.name, "something nobody has seen");
}

TEST(LineReader, JoinsLinesSplitAcrossChunks) {
  LineReader r;
  auto lines = split(r, {"ab", "c\nde", "f\n"});
  EXPECT_EQ(lines, (std::vector<std::string>{"abc", "def"}));
}

TEST(LineReader, DeliversLastLineWithoutNewline) {
  LineReader r;
  auto lines = split(r, {"one\ntwo"});
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two"}));
}

TEST(LineReader, StripsCarriageReturn) {
  LineReader r;
  EXPECT_EQ(split(r, {"a\r\n"}), (std::vector<std::string>{"a"}));
}

TEST(LineReader, CutsOverLongLineAndResumesAtNextNewline) {
  LineReader r(16);
  std::string big(100, 'x');
  auto lines = split(r, {big.substr(0, 40), big.substr(40) + "\nok\n"});
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], std::string(16, 'x'));
  EXPECT_EQ(lines[1], "ok");
  EXPECT_EQ(r.cut_lines(), 1u);
}

TEST(LineReader, BinaryJunkIsJustBytes) {
  LineReader r(64);
  std::string junk("\0\xff\x01NCCL WARN\0\n", 14);
  auto lines = split(r, {junk});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].size(), 13u);  // NUL bytes are kept, not treated as line ends
  Line l;
  EXPECT_FALSE(parse_line(lines[0], l));  // "WARN\0" is not the "NCCL WARN " marker
}

TEST(ParseLine, MpirunTagGluedToTheHostIsNotPartOfIt) {
  // nccl#957 and horovod#3929 (tests/fixtures/nccl-logs/issues): --tag-output without a space.
  Line l;
  ASSERT_TRUE(parse_line("Fri Aug 11 12:31:45 2023[1,0]<stdout>:tomte401:1850301:1881341 [0] transport.cc:154 NCCL "
                         "WARN Cuda failure 'invalid argument'",
                         l));
  EXPECT_EQ(l.host, "tomte401");
  EXPECT_EQ(l.pid, 1850301);
  ASSERT_TRUE(parse_line("[1,2]<stdout>:smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU detected", l));
  EXPECT_EQ(l.host, "smc-gpu-03");
}
