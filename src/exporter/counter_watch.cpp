#include "exporter/counter_watch.hpp"

namespace fabscope::exporter {

namespace {
std::size_t count_backwards(const std::map<std::string, std::uint64_t>& before,
                            const std::map<std::string, std::uint64_t>& now) {
  std::size_t n = 0;
  auto b = before.begin();
  for (const auto& [name, value] : now) {
    while (b != before.end() && b->first < name) ++b;
    if (b == before.end()) break;
    if (b->first == name && value < b->second) ++n;
  }
  return n;
}
}  // namespace

std::size_t CounterWatch::observe(const std::vector<RdmaDevice>& devices) {
  std::size_t backwards = 0;
  std::map<std::pair<std::string, int>, Seen> next;
  for (const auto& d : devices) {
    for (const auto& p : d.ports) {
      auto key = std::make_pair(d.name, p.port);
      if (auto it = last_.find(key); it != last_.end()) {
        backwards += count_backwards(it->second.counters, p.counters);
        backwards += count_backwards(it->second.hw_counters, p.hw_counters);
      }
      next[key] = Seen{p.counters, p.hw_counters};
    }
  }
  last_ = std::move(next);
  return backwards;
}

}  // namespace fabscope::exporter
