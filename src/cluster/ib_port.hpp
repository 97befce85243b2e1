#pragma once
// An InfiniBand port a node reports of itself, so rank 0 (or a saved result read back) can place
// it in a saved fabric. Apart from summary.hpp so the saved result's reader needs no probe types.
#include <cstddef>
#include <cstdint>
#include <string>

namespace fabscope::cluster {

struct IbPortFact {
  std::string port;        // "mlx5_0:1"
  std::uint32_t lid = 0;
  std::string node_guid;   // as the kernel writes it ("0002:c903:00a1:b2c3"), or "0x..."; "" unknown
  std::string state;       // "ACTIVE", ...
};

constexpr std::size_t kMaxIbPorts = 64;

}  // namespace fabscope::cluster
