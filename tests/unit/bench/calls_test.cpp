// The descriptors' NCCL calls (collectives.cpp), run on a simulated world: every rank has host
// buffers, sends and receives are matched per peer pair in order, as NCCL matches them, and the
// data that arrives is checked against what each collective must deliver. The single NCCL
// collectives (ncclAllReduce, ...) are recorded with their arguments.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/collectives.hpp"
#include "core/error.hpp"

using namespace fabscope::bench;

namespace {

using Elem = std::int32_t;
constexpr std::size_t kEb = sizeof(Elem);

// Element i of rank r's input: unique over the world.
Elem input(int rank, std::size_t i) { return static_cast<Elem>(rank * 100000 + static_cast<int>(i)); }

struct Transfer {
  int from, to;
  const char* src;  // send side
  char* dst;        // receive side
  std::size_t bytes;
};

struct World {
  std::vector<Transfer> sends, recvs;
  std::vector<std::string> log;  // "rank 0: send 5 to 1", in call order
  int unmatched = 0;
  // Delivers what one stage posted: the k-th receive of (from, to) takes the k-th send of it.
  void deliver() {
    std::vector<bool> used(sends.size(), false);
    for (const auto& r : recvs) {
      bool found = false;
      for (std::size_t i = 0; i < sends.size() && !found; ++i) {
        if (used[i] || sends[i].from != r.from || sends[i].to != r.to) continue;
        used[i] = found = true;
        EXPECT_EQ(sends[i].bytes, r.bytes) << "send " << r.from << "->" << r.to << " and its receive differ in size";
        std::memcpy(r.dst, sends[i].src, std::min(sends[i].bytes, r.bytes));
      }
      if (!found) ++unmatched;
    }
    for (bool u : used) unmatched += u ? 0 : 1;
    sends.clear();
    recvs.clear();
  }
};

class SimRank final : public NcclCalls {
 public:
  SimRank(World& w, int rank, bool native) : w_(w), rank_(rank), native_(native) {}
  void all_reduce(const void*, void*, std::size_t n) override { note("all_reduce " + std::to_string(n)); }
  void all_gather(const void*, void*, std::size_t n) override { note("all_gather " + std::to_string(n)); }
  void reduce_scatter(const void*, void*, std::size_t n) override { note("reduce_scatter " + std::to_string(n)); }
  void broadcast(const void*, void*, std::size_t n, int root) override {
    note("broadcast " + std::to_string(n) + " root " + std::to_string(root));
  }
  void reduce(const void*, void*, std::size_t n, int root) override {
    note("reduce " + std::to_string(n) + " root " + std::to_string(root));
  }
  bool has_alltoall() const override { return native_; }
  bool has_gather_scatter() const override { return native_; }
  void alltoall(const void*, void*, std::size_t n) override { note("alltoall " + std::to_string(n)); }
  void gather(const void*, void*, std::size_t n, int root) override {
    note("gather " + std::to_string(n) + " root " + std::to_string(root));
  }
  void scatter(const void*, void*, std::size_t n, int root) override {
    note("scatter " + std::to_string(n) + " root " + std::to_string(root));
  }
  void send(const void* buf, std::size_t n, int peer) override {
    if (fail_sends) throw fabscope::Error("ncclSend failed");
    EXPECT_GT(depth, 0) << "send outside a group";
    note("send " + std::to_string(n) + " to " + std::to_string(peer));
    w_.sends.push_back({rank_, peer, static_cast<const char*>(buf), nullptr, n * kEb});
  }
  void recv(void* buf, std::size_t n, int peer) override {
    EXPECT_GT(depth, 0) << "receive outside a group";
    note("recv " + std::to_string(n) + " from " + std::to_string(peer));
    w_.recvs.push_back({peer, rank_, nullptr, static_cast<char*>(buf), n * kEb});
  }
  void group_start() override { ++depth; }
  void group_end(bool after_error) override {
    --depth;
    if (after_error) ++ended_after_error;
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    note("copy " + std::to_string(bytes));
    std::memcpy(dst, src, bytes);
  }
  int depth = 0;
  int ended_after_error = 0;
  bool fail_sends = false;

 private:
  void note(const std::string& s) { w_.log.push_back("rank " + std::to_string(rank_) + ": " + s); }
  World& w_;
  int rank_;
  bool native_;
};

// Buffers of one rank for a plan, the input filled, the output poisoned.
struct RankBuffers {
  std::vector<Elem> send, recv;
};

// Runs one operation of c over n ranks for a requested count of elements; returns each rank's
// buffers after delivery. in_place: the input sits in the receive buffer at the plan's offset.
std::vector<RankBuffers> run(Collective c, int n, std::size_t count, bool native, bool in_place, World& w,
                             int root = 0) {
  const auto& d = describe(c);
  std::vector<RankBuffers> bufs(n);
  std::vector<BufferPlan> plans(n);
  for (int r = 0; r < n; ++r) {
    plans[r] = d.plan(count, kEb, n, r);
    bufs[r].send.assign(std::max<std::size_t>(plans[r].send_count, 1), 0);
    bufs[r].recv.assign(std::max<std::size_t>({plans[r].recv_count, plans[r].inplace_elements(), 1}), -1);
    Elem* in = in_place ? bufs[r].recv.data() + plans[r].inplace_send_offset : bufs[r].send.data();
    for (std::size_t i = 0; i < plans[r].send_count; ++i) in[i] = input(r, i);
  }
  for (int stage = 0; stage < call_stages(d, n); ++stage) {
    for (int r = 0; r < n; ++r) {
      SimRank rank(w, r, native);
      CallArgs a;
      const BufferPlan& p = plans[r];
      a.send = reinterpret_cast<const char*>(in_place ? bufs[r].recv.data() + p.inplace_send_offset : bufs[r].send.data());
      a.recv = reinterpret_cast<char*>(bufs[r].recv.data() + (in_place ? p.inplace_recv_offset : 0));
      a.count = p.param_count;
      a.elem_bytes = kEb;
      a.rank = r;
      a.nranks = n;
      a.root = root;
      a.stage = stage;
      d.call(rank, a);
      EXPECT_EQ(rank.depth, 0) << d.name << ": every group is closed";
    }
    w.deliver();
  }
  EXPECT_EQ(w.unmatched, 0) << d.name << ": every send has its receive";
  return bufs;
}

}  // namespace

TEST(CallTable, EveryCollectiveHasItsCallAtItsIndex) {
  const auto& all = all_collectives();
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(all[i].id), i) << all[i].name;
    EXPECT_NE(all[i].call, nullptr) << all[i].name;
    EXPECT_EQ(&describe(all[i].id), &all[i]);
  }
}

TEST(CallTable, OnlyHypercubeHasStages) {
  for (const auto& d : all_collectives()) {
    int want = d.id == Collective::HyperCube ? 4 : 1;
    EXPECT_EQ(call_stages(d, 8), want) << d.name;
  }
  const auto& h = describe(Collective::HyperCube);
  EXPECT_EQ(call_stages(h, 1), 1);  // the copy of the rank's own block
  EXPECT_EQ(call_stages(h, 2), 2);
  EXPECT_EQ(call_stages(h, 8), 4);
}

TEST(Calls, SingleNcclCollectivesPassCountAndRoot) {
  World w;
  run(Collective::AllReduce, 2, 64, true, false, w);
  run(Collective::Broadcast, 2, 64, true, false, w, 1);
  run(Collective::Reduce, 2, 64, true, false, w, 1);
  run(Collective::AllGather, 2, 64, true, false, w);
  run(Collective::ReduceScatter, 2, 64, true, false, w);
  std::vector<std::string> want = {
      "rank 0: all_reduce 64",      "rank 1: all_reduce 64",      "rank 0: broadcast 64 root 1",
      "rank 1: broadcast 64 root 1", "rank 0: reduce 64 root 1",   "rank 1: reduce 64 root 1",
      "rank 0: all_gather 32",      "rank 1: all_gather 32",      "rank 0: reduce_scatter 32",
      "rank 1: reduce_scatter 32"};
  EXPECT_EQ(w.log, want);
}

TEST(Calls, SendRecvRingDeliversThePreviousRanksBuffer) {
  World w;
  auto b = run(Collective::SendRecv, 3, 16, true, false, w);
  for (int r = 0; r < 3; ++r)
    for (std::size_t i = 0; i < 16; ++i) ASSERT_EQ(b[r].recv[i], input((r + 2) % 3, i)) << "rank " << r;
}

TEST(Calls, AlltoAllNativeIsOneCall) {
  World w;
  run(Collective::AlltoAll, 2, 64, true, false, w);
  EXPECT_EQ(w.log, (std::vector<std::string>{"rank 0: alltoall 32", "rank 1: alltoall 32"}));
}

TEST(Calls, AlltoAllWithoutNcclAlltoAllExchangesOneBlockPerPeer) {
  World w;
  const int n = 4;
  auto b = run(Collective::AlltoAll, n, 64, false, false, w);  // 16 elements per peer
  for (int r = 0; r < n; ++r)
    for (int p = 0; p < n; ++p)
      for (std::size_t i = 0; i < 16; ++i)
        ASSERT_EQ(b[r].recv[p * 16 + i], input(p, r * 16 + i)) << "rank " << r << " block " << p;
}

TEST(Calls, GatherWithoutNcclGatherCollectsEveryBlockAtTheRoot) {
  World w;
  const int n = 3, root = 2;
  auto b = run(Collective::Gather, n, 48, false, false, w, root);  // blocks of 16 elements
  for (int p = 0; p < n; ++p)
    for (std::size_t i = 0; i < 16; ++i) ASSERT_EQ(b[root].recv[p * 16 + i], input(p, i)) << "block " << p;
  EXPECT_EQ(b[0].recv[0], -1) << "a rank other than the root receives nothing";
}

TEST(Calls, ScatterWithoutNcclScatterSendsEachRankItsBlock) {
  World w;
  const int n = 3, root = 1;
  auto b = run(Collective::Scatter, n, 48, false, false, w, root);
  for (int r = 0; r < n; ++r)
    for (std::size_t i = 0; i < 16; ++i) ASSERT_EQ(b[r].recv[i], input(root, r * 16 + i)) << "rank " << r;
}

TEST(Calls, EmptyGatherAndScatterMakeNoCall) {
  World w;
  run(Collective::Gather, 4, 2, false, false, w);  // 2 elements over 4 ranks: empty blocks
  run(Collective::Scatter, 4, 2, true, false, w);
  EXPECT_TRUE(w.log.empty());
}

TEST(Calls, AlltoAllvSharesArriveInPeerOrderAndFillThePlan) {
  World w;
  const int n = 4;
  const std::size_t count = 256;
  auto b = run(Collective::AlltoAllv, n, count, true, false, w);
  const auto& d = describe(Collective::AlltoAllv);
  for (int r = 0; r < n; ++r) {
    BufferPlan p = d.plan(count, kEb, n, r);
    std::uint64_t total = static_cast<std::uint64_t>(p.param_count) * n * kEb;
    std::size_t at = 0;
    for (int peer = 0; peer < n; ++peer) {
      // What peer sent r starts, in peer's input, after its shares for ranks below r.
      std::size_t offset = 0;
      for (int q = 0; q < r; ++q) offset += alltoallv_peer_bytes(peer, q, n, total) / kEb;
      std::size_t share = alltoallv_peer_bytes(peer, r, n, total) / kEb;
      for (std::size_t i = 0; i < share; ++i)
        ASSERT_EQ(b[r].recv[at + i], input(peer, offset + i)) << "rank " << r << " from " << peer;
      at += share;
    }
    EXPECT_EQ(at, p.recv_count) << "rank " << r;
  }
}

TEST(Calls, HypercubeGathersEveryBlockOutOfPlaceAndInPlace) {
  for (int n : {1, 2, 4, 8}) {
    for (bool in_place : {false, true}) {
      World w;
      const std::size_t count = 16 * static_cast<std::size_t>(n);  // blocks of 16 elements
      auto b = run(Collective::HyperCube, n, count, true, in_place, w);
      for (int r = 0; r < n; ++r)
        for (int p = 0; p < n; ++p)
          for (std::size_t i = 0; i < 16; ++i)
            ASSERT_EQ(b[r].recv[p * 16 + i], input(p, i))
                << n << " ranks, " << (in_place ? "in" : "out-of") << " place, rank " << r << " block " << p;
    }
  }
}

TEST(Calls, HypercubeInPlaceDoesNotCopyTheOwnBlock) {
  World w;
  run(Collective::HyperCube, 2, 32, true, true, w);
  for (const auto& line : w.log) EXPECT_EQ(line.find("copy"), std::string::npos) << line;
}

TEST(Calls, AFailingCallInsideAGroupLeavesTheGroupAndPropagates) {
  World w;
  SimRank rank(w, 0, true);
  rank.fail_sends = true;
  CallArgs a;
  std::vector<Elem> buf(8);
  a.send = reinterpret_cast<const char*>(buf.data());
  a.recv = reinterpret_cast<char*>(buf.data());
  a.count = 8;
  a.elem_bytes = kEb;
  a.nranks = 2;
  EXPECT_THROW(describe(Collective::SendRecv).call(rank, a), fabscope::Error);
  EXPECT_EQ(rank.depth, 0);
  EXPECT_EQ(rank.ended_after_error, 1);
}
