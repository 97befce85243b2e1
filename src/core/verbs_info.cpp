#include "core/verbs_info.hpp"

namespace fabscope {

namespace {
namespace impl {
// The macro defines inline functions; the header's declarations need out-of-line definitions
// (node_info.cpp serialises VerbsInfo), so the public functions below forward here.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(VerbsGid, index, gid, type, netdev)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(VerbsPort, port, state, state_code, phys_state,
                                                phys_state_code, link_layer, active_mtu, max_mtu,
                                                lid, sm_lid, rate_gbps, gid_tbl_len, gids)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(VerbsDevice, name, node_guid, fw_ver, vendor_id,
                                                vendor_part_id, ports, error)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(VerbsInfo, available, status, devices)
}  // namespace impl
}  // namespace

void to_json(json& j, const VerbsGid& v) { impl::to_json(j, v); }
void from_json(const json& j, VerbsGid& v) { impl::from_json(j, v); }
void to_json(json& j, const VerbsPort& v) { impl::to_json(j, v); }
void from_json(const json& j, VerbsPort& v) { impl::from_json(j, v); }
void to_json(json& j, const VerbsDevice& v) { impl::to_json(j, v); }
void from_json(const json& j, VerbsDevice& v) { impl::from_json(j, v); }
void to_json(json& j, const VerbsInfo& v) { impl::to_json(j, v); }
void from_json(const json& j, VerbsInfo& v) { impl::from_json(j, v); }

const VerbsDevice* VerbsInfo::find(const std::string& name) const {
  for (const auto& d : devices)
    if (d.name == name) return &d;
  return nullptr;
}

}  // namespace fabscope
