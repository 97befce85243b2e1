// The MAD engine's scheduling by destination: DestinationQueues (src/fabric/mad_scheduler.hpp)
// with plain values, then MadEngine (src/fabric/umad.hpp) on a fake libibumad that answers every
// MAD at once and records the order of the sends and how many were outstanding per destination.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "fabric/mad.hpp"
#include "fabric/mad_scheduler.hpp"
#include "fabric/umad.hpp"

using namespace fabscope::fabric;

namespace {

std::string take_all(DestinationQueues<int>& q) {  // takes everything it may, "dest:value" each
  std::string s;
  while (auto it = q.next()) s += (s.empty() ? "" : " ") + it->dest + ":" + std::to_string(it->value);
  return s;
}

TEST(DestinationQueues, DestinationsTakeTurnsInTheOrderTheyCame) {
  DestinationQueues<int> q;
  q.set_limit(100);
  for (const char* d : {"a", "b", "c"})
    for (int i = 0; i < 3; ++i) q.push(d, i);
  EXPECT_EQ(q.queued(), 9u);
  // Submitted a a a b b b c c c; sent in turns, each destination's own in the order submitted.
  EXPECT_EQ(take_all(q), "a:0 b:0 c:0 a:1 b:1 c:1 a:2 b:2 c:2");
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.outstanding("a"), 3);
}

TEST(DestinationQueues, LimitHoldsADestinationUntilDone) {
  DestinationQueues<int> q;
  q.set_limit(2);
  for (int i = 0; i < 5; ++i) q.push("a", i);
  q.push("b", 0);
  EXPECT_EQ(take_all(q), "a:0 b:0 a:1");  // a has 2 outstanding, b nothing queued
  EXPECT_EQ(q.outstanding("a"), 2);
  EXPECT_EQ(q.queued(), 3u);
  q.done("b");
  EXPECT_EQ(take_all(q), "");  // b's slot is free but it has nothing; a is still full
  q.done("a");
  EXPECT_EQ(take_all(q), "a:2");
  q.push("b", 1);  // work for a destination with a free slot: its turn comes
  q.done("a");
  EXPECT_EQ(take_all(q), "b:1 a:3");
  q.done("a");
  q.done("a");
  EXPECT_EQ(take_all(q), "a:4");
  EXPECT_TRUE(q.empty());
  q.done("nowhere");  // unknown: nothing happens
  EXPECT_EQ(q.outstanding("nowhere"), 0);
}

TEST(DestinationQueues, AFreedDestinationGoesBehindTheOthers) {
  DestinationQueues<int> q;
  q.set_limit(1);
  for (const char* d : {"a", "b", "c"})
    for (int i = 0; i < 2; ++i) q.push(d, i);
  EXPECT_EQ(take_all(q), "a:0 b:0 c:0");
  q.done("c");
  q.done("a");
  q.done("b");
  EXPECT_EQ(take_all(q), "c:1 a:1 b:1");  // in the order their slots came free
}

#ifdef FABSCOPE_UMAD_HEADERS

// A libibumad that answers every MAD at once: a pipe is readable while answers wait; set_addr
// writes the DLID into the first two bytes of the fake umad header (64 bytes, as libibumad's).
struct FakeUmad {
  int pipe_fd[2] = {-1, -1};
  struct Answer {
    std::uint16_t dlid;
    std::array<std::uint8_t, 256> mad;
  };
  std::deque<Answer> answers;
  std::vector<std::uint16_t> sends;                 // the DLID of each MAD sent, in order
  std::map<std::uint16_t, int> outstanding, most;   // sent, not yet received by the engine
  int total = 0, most_total = 0;
};
FakeUmad* g_fake_umad = nullptr;

UmadLib fake_lib() {
  UmadLib l;
  l.open_port = +[](const char*, int) { return 3; };
  l.close_port = +[](int) { return 0; };
  l.reg = +[](int, int mgmt_class, int, std::uint8_t, long*) { return mgmt_class; };
  l.unreg = +[](int, int) { return 0; };
  l.get_fd = +[](int) { return g_fake_umad->pipe_fd[0]; };
  l.size = +[]() -> std::size_t { return 64; };
  l.get_mad = +[](void* b) -> void* { return static_cast<char*>(b) + 64; };
  l.status = +[](void*) { return 0; };
  l.set_addr = +[](void* b, int dlid, int, int, int) {
    auto* h = static_cast<std::uint8_t*>(b);
    h[0] = static_cast<std::uint8_t>(dlid >> 8);
    h[1] = static_cast<std::uint8_t>(dlid);
    return 0;
  };
  l.send = +[](int, int, void* b, int, int, int) {
    auto* h = static_cast<std::uint8_t*>(b);
    FakeUmad::Answer a;
    a.dlid = static_cast<std::uint16_t>(h[0] << 8 | h[1]);
    std::memcpy(a.mad.data(), h + 64, 256);
    a.mad[3] |= 0x80;  // GetResp
    g_fake_umad->sends.push_back(a.dlid);
    int n = ++g_fake_umad->outstanding[a.dlid];
    g_fake_umad->most[a.dlid] = std::max(g_fake_umad->most[a.dlid], n);
    g_fake_umad->most_total = std::max(g_fake_umad->most_total, ++g_fake_umad->total);
    g_fake_umad->answers.push_back(a);
    char c = 1;
    EXPECT_EQ(::write(g_fake_umad->pipe_fd[1], &c, 1), 1);
    return 0;
  };
  l.recv = +[](int, void* b, int*, int) {
    if (g_fake_umad->answers.empty()) return -EWOULDBLOCK;
    FakeUmad::Answer a = g_fake_umad->answers.front();
    g_fake_umad->answers.pop_front();
    std::memcpy(static_cast<char*>(b) + 64, a.mad.data(), 256);
    char c;
    EXPECT_EQ(::read(g_fake_umad->pipe_fd[0], &c, 1), 1);
    --g_fake_umad->outstanding[a.dlid];
    --g_fake_umad->total;
    return 0;
  };
  return l;
}

class MadEngineScheduling : public ::testing::Test {
 protected:
  void SetUp() override {
    g_fake_umad = &state;
    ASSERT_EQ(::pipe(state.pipe_fd), 0);
  }
  void TearDown() override {
    ::close(state.pipe_fd[0]);
    ::close(state.pipe_fd[1]);
    g_fake_umad = nullptr;
  }
  // n counter queries to each of the LIDs, submitted LID by LID (as the sweep submits a switch's
  // ports back to back); returns how many were answered.
  int submit(MadEngine& e, std::initializer_list<std::uint16_t> lids, int n) {
    for (std::uint16_t lid : lids)
      for (int i = 0; i < n; ++i) {
        MadRequest r;
        r.mad = mad::pma_get(mad::PortCounters, i + 1, 0);
        r.dlid = lid;
        r.on_reply = [this](std::span<const std::uint8_t>) { ++answered; };
        r.on_fail = [](const std::string& why) { ADD_FAILURE() << why; };
        e.submit(std::move(r));
      }
    return answered;
  }
  FakeUmad state;
  int answered = 0;
};

TEST_F(MadEngineScheduling, OneAtATimePerDestinationInTurns) {
  UmadLib l = fake_lib();
  MadEngine e(l, LocalPort{"fake", 1, 1}, 1000, 0);
  submit(e, {1, 2, 3}, 4);
  e.run(3, 1);
  EXPECT_EQ(answered, 12);
  // FIFO would send 1 1 1 and then wait on LID 1; in turns every LID has one in flight.
  EXPECT_EQ(state.sends, (std::vector<std::uint16_t>{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}));
  for (std::uint16_t lid : {1, 2, 3}) EXPECT_EQ(state.most[lid], 1) << lid;
  EXPECT_EQ(e.sent(), 12u);
}

TEST_F(MadEngineScheduling, BothLimitsHoldAndAreUsed) {
  UmadLib l = fake_lib();
  MadEngine e(l, LocalPort{"fake", 1, 1}, 1000, 0);
  submit(e, {1, 2, 3}, 8);
  e.run(4, 2);
  EXPECT_EQ(answered, 24);
  ASSERT_GE(state.sends.size(), 4u);
  EXPECT_EQ(std::vector<std::uint16_t>(state.sends.begin(), state.sends.begin() + 4),
            (std::vector<std::uint16_t>{1, 2, 3, 1}));
  EXPECT_EQ(state.most_total, 4);
  for (std::uint16_t lid : {1, 2, 3}) EXPECT_EQ(state.most[lid], 2) << lid;
}

TEST_F(MadEngineScheduling, DirectedRoutesAreDestinationsByPath) {
  EXPECT_EQ(MadEngine::destination(MadRequest{mad::smp_dr_get(mad::NodeInfo, 0, 0, {1, 3}), 0, {}, {}}),
            std::string("D\x01\x03", 3));
  EXPECT_NE(MadEngine::destination(MadRequest{mad::smp_dr_get(mad::NodeInfo, 0, 0, {1, 3}), 0, {}, {}}),
            MadEngine::destination(MadRequest{mad::smp_dr_get(mad::NodeInfo, 0, 0, {1, 4}), 0, {}, {}}));
  EXPECT_EQ(MadEngine::destination(MadRequest{mad::smp_dr_get(mad::NodeInfo, 0, 0, {}), 0, {}, {}}), "D");
  EXPECT_EQ(MadEngine::destination(MadRequest{mad::pma_get(mad::PortCounters, 1, 0), 0x0102, {}, {}}),
            std::string("L\x01\x02", 3));
}

#endif

}  // namespace
