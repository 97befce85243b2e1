#pragma once
// Remembers each port's counters between scrapes and counts the ones that went backwards.
// A decrease is a reset (driver reload, `perfquery -R`) or a wrap of a 32-bit counter; Prometheus'
// rate() already treats it as a reset, so the value is still exported as read, but the exporter
// counts it so that an operator can tell a flapping counter from a quiet port.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/node_info.hpp"

namespace fabscope::exporter {

class CounterWatch {
 public:
  // Compares with the previous call and remembers these values. Returns how many counters
  // (counters/* and hw_counters/*) are lower than last time. Ports that vanished are forgotten,
  // so memory follows the ports present.
  std::size_t observe(const std::vector<RdmaDevice>& devices);
  std::size_t ports_tracked() const { return last_.size(); }

 private:
  struct Seen {
    std::map<std::string, std::uint64_t> counters, hw_counters;
  };
  std::map<std::pair<std::string, int>, Seen> last_;
};

}  // namespace fabscope::exporter
