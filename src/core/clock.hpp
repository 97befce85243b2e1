#pragma once
// Wall-clock time as the seconds since the Unix epoch (Prometheus' timestamps and "last seen"
// gauges), in one place.
#include <chrono>

namespace fabscope::core {

inline double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace fabscope::core
