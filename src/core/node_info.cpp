#include "core/node_info.hpp"

#include <algorithm>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace fabscope {

std::string port_name(const RdmaDevice& dev, const RdmaPort& port) {
  return dev.name + ":" + std::to_string(port.port);
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GidEntry, index, gid, type, netdev, ipv4_mapped)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RdmaPort, port, state, state_code, phys_state,
                                                phys_state_code, rate, rate_gbps, link_layer, lid,
                                                sm_lid, active_mtu, netdev, gids, counters,
                                                hw_counters)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RdmaDevice, name, hca_type, fw_ver, board_id,
                                                node_guid, node_type, pci_address, numa_node, ports)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(LldpNeighbor, protocol, chassis_name, chassis_id,
                                                chassis_id_type, port_id, port_id_type, port_descr,
                                                mfs_bytes, vlan_ids, pvid, mgmt_addresses)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(LldpState, source, note)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Netdev, name, mtu, operstate, speed_mbps, type,
                                                address, pci_address, is_virtual, rdma_ports, ipv4,
                                                lldp_neighbors)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PciDevice, address, class_code, vendor, device,
                                                driver, numa_node, sriov_numvfs, sriov_totalvfs,
                                                physfn, current_link_speed_gts,
                                                max_link_speed_gts, current_link_width,
                                                max_link_width, upstream, root_complex, is_bridge,
                                                acs_enabled, acs_ctrl)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(NvLink, link, active, version_code, remote_type,
                                                remote_pci_address, replay_errors, recovery_errors,
                                                crc_flit_errors, crc_data_errors, ecc_data_errors,
                                                data_transmitted_bytes, data_received_bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Gpu, index, pci_address, name, uuid, numa_node,
                                                nvlink_total, nvlink_active, source, nvlinks,
                                                nvlink_data_transmitted_bytes,
                                                nvlink_data_received_bytes,
                                                nvlink_raw_transmitted_bytes,
                                                nvlink_raw_received_bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GpuPair, gpu_a, gpu_b, level, nvlinks, source,
                                                p2p_read, p2p_write, p2p_nvlink, p2p_atomics)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Affinity, gpu, nic, level)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Versions, nvidia_driver, nccl, nccl_code,
                                                cuda_driver, cuda_runtime)
// The node_network.hpp types: defined here, where NodeInfo's (de)serialisation uses them (the
// macro's functions are inline, so they must be in the same translation unit).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(DcbApp, selector, protocol, priority)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(LosslessState, netdev, rdma_ports, pfc_priorities,
                                                pfc_capable_tcs, apps, trust, dcb_note,
                                                ecn_np_priorities, ecn_rp_priorities, ecn_note)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(BondSlave, name, mii_status, speed_mbps, duplex,
                                                link_failure_count, permanent_hw_addr)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Bond, name, mode, mii_status, active_slave,
                                                mii_polling_ms, slaves)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(IrqInfo, irq, name, affinity_cpus, affinity_source, count)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(NicIrqs, pci_address, netdevs, rdma_devices, numa_node,
                                                irqs, note)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(NumaNode, node, cpus)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PortRange, lo, hi)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FirewallMatch, field, op, values, opaque, text)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FirewallRule, handle, verdict, target, matches, text)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FirewallChain, family, table, name, hook, type,
                                                priority, policy, rules)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Firewall, source, note, chains)


namespace {
json limit_to_json(const std::optional<std::uint64_t>& v) {
  if (!v) return nullptr;
  if (*v == kUnlimited) return "unlimited";
  return *v;
}
std::optional<std::uint64_t> limit_from_json(const json& j) {
  if (j.is_null()) return std::nullopt;
  if (j.is_string() && j.get<std::string>() == "unlimited") return kUnlimited;
  return j.get<std::uint64_t>();
}
}  // namespace

void to_json(json& j, const KernelInfo& v) {
  j = json{{"release", v.release},
           {"modules", v.modules},
           {"cmdline", v.cmdline},
           {"sysctls", v.sysctls},
           {"memlock_soft_bytes", limit_to_json(v.memlock_soft_bytes)},
           {"memlock_hard_bytes", limit_to_json(v.memlock_hard_bytes)}};
}

void from_json(const json& j, KernelInfo& v) {
  v.release = j.value("release", "");
  v.modules = j.value("modules", std::vector<std::string>{});
  v.cmdline = j.value("cmdline", "");
  v.sysctls = j.value("sysctls", std::map<std::string, std::string>{});
  v.memlock_soft_bytes = limit_from_json(j.value("memlock_soft_bytes", json()));
  v.memlock_hard_bytes = limit_from_json(j.value("memlock_hard_bytes", json()));
}

void to_json(json& j, const NodeInfo& v) {
  j = json{{"schema", "fabscope.node"},
           {"schema_version", NodeInfo::kSchemaVersion},
           {"hostname", v.hostname},
           {"root", v.root},
           {"rdma_devices", v.rdma_devices},
           {"netdevs", v.netdevs},
           {"pci_devices", v.pci_devices},
           {"gpus", v.gpus},
           {"gpu_nic_affinity", v.gpu_nic_affinity},
           {"gpu_topology", v.gpu_topology},
           {"kernel", v.kernel},
           {"kernel_modules", v.kernel.modules},
           {"versions", v.versions},
           {"lossless", v.lossless},
           {"bonds", v.bonds},
           {"nic_irqs", v.nic_irqs},
           {"numa_nodes", v.numa_nodes},
           {"firewall", v.firewall},
           {"lldp", v.lldp},
           {"probe_notes", v.probe_notes}};
  // Only live probes query verbs; fixture-root output stays as it was without the key.
  if (v.verbs) j["verbs"] = *v.verbs;
}

namespace {
// nlohmann converts a JSON float into an integer field with a plain cast: undefined behaviour
// beyond the field's range (a counter written as 4734888888888888888888888 parses as a float)
// and a silent truncation within it (a port of 1.5). Every number of a node description is an
// integer except these, so any other float is refused naming its place.
bool float_field(std::string_view key) {
  return key == "rate_gbps" || key == "current_link_speed_gts" || key == "max_link_speed_gts";
}

// Counters, rates, sizes and ids are never negative (nlohmann would wrap -5 into a counter of
// 18446744073709551611 and judge a rate of -100 Gb/s); only these fields may be: a NUMA node of -1
// (none) and an nftables chain priority.
bool signed_field(std::string_view key) { return key == "numa_node" || key == "priority"; }

void check_numbers(const json& j, const std::string& path, std::string_view key, int depth) {
  if (depth > 32) throw Error("'" + path + "' is nested deeper than a node description goes (32 levels)");
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      check_numbers(*it, path.empty() ? it.key() : path + "." + it.key(), it.key(), depth + 1);
  } else if (j.is_array()) {
    std::size_t i = 0;
    for (const auto& x : j) check_numbers(x, path + "[" + std::to_string(i++) + "]", key, depth + 1);
  } else if (j.is_number_float() && !float_field(key)) {
    throw Error("field '" + path + "' is " + j.dump() + ", not an integer");
  } else if (j.is_number_float() && !(j.get<double>() >= 0)) {
    throw Error("field '" + path + "' is " + j.dump() + ", not a rate or speed (negative)");
  } else if (j.is_number_integer() && !j.is_number_unsigned() && j.get<std::int64_t>() < 0 && !signed_field(key)) {
    throw Error("field '" + path + "' is " + j.dump() + ": counters, rates, sizes and ids are not negative");
  }
}
}  // namespace

void from_json(const json& j, NodeInfo& v) {
  check_numbers(j, "", "", 0);
  if (j.value("schema", "") != "fabscope.node") {
    throw Error("not a fabscope node description: field 'schema' is '" +
                j.value("schema", std::string("(missing)")) + "', expected 'fabscope.node'");
  }
  int version = j.value("schema_version", 0);
  if (version != NodeInfo::kSchemaVersion) {
    throw Error("unsupported fabscope.node schema_version " + std::to_string(version) +
                " (this build reads " + std::to_string(NodeInfo::kSchemaVersion) + ")");
  }
  v.hostname = j.value("hostname", "");
  v.root = j.value("root", "");
  v.rdma_devices = j.value("rdma_devices", std::vector<RdmaDevice>{});
  v.netdevs = j.value("netdevs", std::vector<Netdev>{});
  v.pci_devices = j.value("pci_devices", std::vector<PciDevice>{});
  v.gpus = j.value("gpus", std::vector<Gpu>{});
  v.gpu_nic_affinity = j.value("gpu_nic_affinity", std::vector<Affinity>{});
  v.gpu_topology = j.value("gpu_topology", std::vector<GpuPair>{});
  v.kernel = j.value("kernel", KernelInfo{});
  v.versions = j.value("versions", Versions{});
  v.lossless = j.value("lossless", std::vector<LosslessState>{});
  v.bonds = j.value("bonds", std::vector<Bond>{});
  v.nic_irqs = j.value("nic_irqs", std::vector<NicIrqs>{});
  v.numa_nodes = j.value("numa_nodes", std::vector<NumaNode>{});
  v.firewall = j.value("firewall", Firewall{});
  v.lldp = j.value("lldp", LldpState{});
  v.probe_notes = j.value("probe_notes", std::vector<std::string>{});
  v.verbs = j.value("verbs", std::optional<VerbsInfo>{});
}

const RdmaDevice* NodeInfo::find_rdma(const std::string& name) const {
  for (const auto& d : rdma_devices)
    if (d.name == name) return &d;
  return nullptr;
}
const Netdev* NodeInfo::find_netdev(const std::string& name) const {
  for (const auto& d : netdevs)
    if (d.name == name) return &d;
  return nullptr;
}
const PciDevice* NodeInfo::find_pci(const std::string& address) const {
  for (const auto& d : pci_devices)
    if (d.address == address) return &d;
  return nullptr;
}
bool NodeInfo::has_module(const std::string& name) const {
  return std::find(kernel.modules.begin(), kernel.modules.end(), name) != kernel.modules.end();
}

}  // namespace fabscope
