#include "exporter/counter_watch.hpp"

#include <gtest/gtest.h>

namespace fabscope::exporter {
namespace {

std::vector<RdmaDevice> one_port(std::uint64_t xmit, std::uint64_t cnp) {
  RdmaDevice d;
  d.name = "mlx5_0";
  RdmaPort p;
  p.port = 1;
  p.counters = {{"port_xmit_data", xmit}, {"symbol_error", 0}};
  p.hw_counters = {{"np_cnp_sent", cnp}};
  d.ports.push_back(p);
  return {d};
}

TEST(CounterWatch, FirstScrape_CountsNothing) {
  CounterWatch w;
  EXPECT_EQ(w.observe(one_port(100, 5)), 0u);
}

TEST(CounterWatch, GrowingCounters_CountNothing) {
  CounterWatch w;
  w.observe(one_port(100, 5));
  EXPECT_EQ(w.observe(one_port(200, 5)), 0u);
}

TEST(CounterWatch, CounterGoingBackwards_IsCountedOncePerCounter) {
  CounterWatch w;
  w.observe(one_port(100, 5));
  EXPECT_EQ(w.observe(one_port(50, 1)), 2u);
  EXPECT_EQ(w.observe(one_port(60, 2)), 0u);  // compared with the new, lower values
}

TEST(CounterWatch, VanishedPort_IsForgottenAndComesBackFresh) {
  CounterWatch w;
  w.observe(one_port(100, 5));
  EXPECT_EQ(w.observe({}), 0u);
  EXPECT_EQ(w.ports_tracked(), 0u);
  EXPECT_EQ(w.observe(one_port(1, 1)), 0u);
}

TEST(CounterWatch, CounterFileThatDisappears_IsNotABackwardsStep) {
  CounterWatch w;
  w.observe(one_port(100, 5));
  auto now = one_port(100, 5);
  now[0].ports[0].counters.erase("port_xmit_data");
  EXPECT_EQ(w.observe(now), 0u);
}

}  // namespace
}  // namespace fabscope::exporter
