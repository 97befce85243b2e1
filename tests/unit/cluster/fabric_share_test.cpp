// --fabric-from: one rank's sweep reaches rank 0 in chunks through the exchange, every rank
// taking part; failures on the sweeping rank are said on rank 0. Ranks are threads around an
// in-memory exchange with the gather/broadcast semantics of exchange.hpp.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "../fabric/fabric_builders.hpp"
#include "cluster/fabric_share.hpp"
#include "core/error.hpp"

namespace fabscope::cluster {
namespace {

struct Hub {
  explicit Hub(int n) : world(n), slots(static_cast<std::size_t>(n)) {}
  int world;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::optional<std::string>> slots;
  int deposited = 0;
  std::uint64_t gathers = 0, broadcasts = 0;
  std::string bcast;
};

class FakeExchange : public Exchange {
 public:
  FakeExchange(Hub& h, int rank) : h_(h), rank_(rank) {}
  int rank() const override { return rank_; }
  int world() const override { return h_.world; }
  std::string launcher() const override { return "env"; }
  std::vector<std::optional<std::string>> gather(const std::string& mine) override {
    std::unique_lock lk(h_.mu);
    const std::uint64_t step = my_gathers_++;
    h_.cv.wait(lk, [&] { return h_.gathers == step; });  // the previous gather is collected
    h_.slots[static_cast<std::size_t>(rank_)] = mine;
    ++h_.deposited;
    h_.cv.notify_all();
    if (rank_ != 0) {
      h_.cv.wait(lk, [&] { return h_.gathers > step; });
      return {};
    }
    h_.cv.wait(lk, [&] { return h_.deposited == h_.world; });
    auto out = h_.slots;
    for (auto& s : h_.slots) s.reset();
    h_.deposited = 0;
    ++h_.gathers;
    h_.cv.notify_all();
    return out;
  }
  std::string broadcast(const std::string& from_root) override {
    std::unique_lock lk(h_.mu);
    const std::uint64_t step = my_broadcasts_++;
    if (rank_ == 0) {
      h_.bcast = from_root;
      h_.broadcasts = step + 1;
      h_.cv.notify_all();
      return from_root;
    }
    h_.cv.wait(lk, [&] { return h_.broadcasts > step; });
    return h_.bcast;
  }
  std::string why_missing(int) const override { return ""; }
  std::string local_address() const override { return "127.0.0.1"; }

 private:
  Hub& h_;
  int rank_;
  std::uint64_t my_gathers_ = 0, my_broadcasts_ = 0;
};

fabric::Subnet small_fabric() {
  using namespace fabscope::testing;
  fabric::Subnet s;
  const int h = add_node(s, fabric::NodeType::Hca, "h0 mlx5_0", 0x10, 1, 1);
  const int sw = add_node(s, fabric::NodeType::Switch, "leaf0", 0x20, 4, 2);
  connect(s, h, 1, sw, 1);
  s.nodes[static_cast<std::size_t>(sw)].lft = {0xff, 1, 0};
  s.source = "mlx5_0:1";
  s.rebuild_links();
  return s;
}

// Runs share_fabric on every rank; returns rank 0's result.
SharedFabric run(int world, int from, std::function<fabric::Subnet()> sweep, std::size_t chunk) {
  Hub hub(world);
  std::vector<SharedFabric> results(static_cast<std::size_t>(world));
  std::vector<std::thread> ranks;
  for (int r = 0; r < world; ++r)
    ranks.emplace_back([&, r] {
      FakeExchange ex(hub, r);
      results[static_cast<std::size_t>(r)] = share_fabric(ex, from, sweep, chunk);
    });
  for (auto& t : ranks) t.join();
  for (int r = 1; r < world; ++r) {
    EXPECT_FALSE(results[static_cast<std::size_t>(r)].fabric);
    EXPECT_TRUE(results[static_cast<std::size_t>(r)].error.empty());
  }
  return results[0];
}

TEST(FabricShare, TheSweepReachesRankZeroInChunks) {
  int swept = 0;
  const SharedFabric got = run(4, 2, [&] { ++swept; return small_fabric(); }, 64);
  EXPECT_EQ(swept, 1);  // only the sweeping rank sweeps
  ASSERT_TRUE(got.fabric) << got.error;
  EXPECT_EQ(fabric::to_json(*got.fabric), fabric::to_json(small_fabric()));
  EXPECT_EQ(got.fabric->nodes[1].lft, (std::vector<std::uint8_t>{0xff, 1, 0}));
}

TEST(FabricShare, RankZeroCanSweepItself) {
  const SharedFabric got = run(2, 0, small_fabric, kFabricChunkBytes);
  ASSERT_TRUE(got.fabric) << got.error;
}

TEST(FabricShare, ASweepThatFailsIsSaidOnRankZero) {
  const SharedFabric got = run(3, 1, []() -> fabric::Subnet { throw Error("no InfiniBand management access"); }, 64);
  EXPECT_FALSE(got.fabric);
  EXPECT_EQ(got.error, "--fabric-from 1: no InfiniBand management access");
}

TEST(FabricShare, ARankOutsideTheJobIsSaid) {
  const SharedFabric got = run(2, 5, small_fabric, 64);
  EXPECT_FALSE(got.fabric);
  EXPECT_NE(got.error.find("no such rank"), std::string::npos) << got.error;
}

}  // namespace
}  // namespace fabscope::cluster
