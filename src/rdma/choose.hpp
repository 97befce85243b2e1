#pragma once
// The automatic choices of fabscope rdma, made from the probe's NodeInfo (pure: unit-tested on
// fixture trees): the device and port whose netdev holds the source address of the route to
// the peer (RoCE) or the first ACTIVE InfiniBand port, the GID index (the RoCE v2 entry with
// that IPv4 address), the MTU and the LID. Each choice carries its reason.
#include <optional>
#include <string>
#include <vector>

#include "core/node_info.hpp"
#include "rdma/types.hpp"

namespace fabscope::rdma {

struct ChoiceInput {
  std::string device;                // -d, "" = choose
  std::optional<int> port;           // -d DEV:PORT
  std::optional<int> gid_index;      // -x
  std::string local_ipv4;            // our address toward the peer ("" = unknown)
  std::string peer;                  // the peer as the user named it, for reasons
  bool server = false;               // local_ipv4 is the address the client reached
};

struct Chosen {
  Endpoint endpoint;
  std::vector<Choice> choices;
  std::vector<Finding> problems;  // fail findings: nothing usable (no device, port down, bad -x)
};

Chosen choose(const NodeInfo& node, const ChoiceInput& in);

// "0000:0000:0000:0000:0000:ffff:0a09:0002" -> "10.9.0.2"; "" when not IPv4-mapped.
std::string gid_ipv4(const std::string& gid);

}  // namespace fabscope::rdma
