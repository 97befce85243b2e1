#pragma once
// VerbsInfo: what libibverbs reports for each RDMA device, a second source beside sysfs.
// rdma-core answers ibv_query_port / ibv_query_device through uverbs commands to the kernel and
// runs the user-space provider (librxe, libmlx5), so it can disagree with sysfs: a missing
// provider hides a device from every verbs application (NCCL included) while sysfs still lists
// it. Strings use the sysfs spellings ("ACTIVE", "LinkUp", "Ethernet") so the two compare
// directly; GID types are the verbs ones ("IB", "RoCE v1", "RoCE v2").
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"

namespace fabscope {

struct VerbsGid {
  int index = 0;
  std::string gid;     // sysfs spelling: "0000:0000:0000:0000:0000:ffff:0a09:0001"
  std::string type;    // "IB" | "RoCE v1" | "RoCE v2" | "" when the library cannot say
  std::string netdev;  // from the entry's ndev_ifindex; "" for IB or unknown
};

struct VerbsPort {
  int port = 0;
  std::string state;       // "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER", "NOP"
  int state_code = 0;
  std::string phys_state;  // "Sleep", "Polling", "Disabled", "LinkUp", ...
  int phys_state_code = 0;
  std::string link_layer;  // "InfiniBand" | "Ethernet" | "" (unspecified)
  std::optional<int> active_mtu;  // bytes
  std::optional<int> max_mtu;     // bytes
  std::uint32_t lid = 0;
  std::uint32_t sm_lid = 0;
  std::optional<double> rate_gbps;  // active_width x active_speed
  int gid_tbl_len = 0;
  std::vector<VerbsGid> gids;  // valid, non-zero entries only
};

struct VerbsDevice {
  std::string name;
  std::string node_guid;  // "94c8:d9ff:fe9b:183a", as sysfs writes it
  std::string fw_ver;
  std::uint32_t vendor_id = 0;
  std::uint32_t vendor_part_id = 0;
  std::vector<VerbsPort> ports;
  std::string error;  // why the device could not be opened or queried, "" when it was
};

struct VerbsInfo {
  // false when fabscope was built without libibverbs-dev or libibverbs.so.1 is not installed;
  // status then says which.
  bool available = false;
  std::string status;  // "libibverbs 44.0 ..." or why not available
  std::vector<VerbsDevice> devices;

  const VerbsDevice* find(const std::string& name) const;
};

void to_json(json& j, const VerbsGid& v);
void from_json(const json& j, VerbsGid& v);
void to_json(json& j, const VerbsPort& v);
void from_json(const json& j, VerbsPort& v);
void to_json(json& j, const VerbsDevice& v);
void from_json(const json& j, VerbsDevice& v);
void to_json(json& j, const VerbsInfo& v);
void from_json(const json& j, VerbsInfo& v);

}  // namespace fabscope
