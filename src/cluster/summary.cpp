#include "cluster/summary.hpp"

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace fabscope::cluster {

namespace {

// Sorted distinct values, joined: the order of devices must not make two equal nodes differ.
std::string distinct(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return core::join(v, ",");
}

// "400 Gb/s x2,200 Gb/s x1" style, counted: two 400G ports and one 200G port.
std::string counted(std::vector<std::string> v) {
  std::map<std::string, int> n;
  for (auto& s : v) ++n[s];
  std::vector<std::string> parts;
  for (const auto& [value, count] : n) parts.push_back(value + " x" + std::to_string(count));
  return core::join(parts, ",");
}

bool active(const RdmaPort& p) { return p.state == "ACTIVE" || p.state == "ACTIVE_DEFER"; }

}  // namespace

std::map<std::string, std::string> node_attributes(const NodeInfo& node, const ncclenv::EnvPlan* plan) {
  std::map<std::string, std::string> a;
  std::vector<std::string> layers, rates, mtus, netdev_mtus, gid_indexes, firmware;
  int active_ports = 0;
  bool rates_known = true, mtus_known = true;
  for (const auto& d : node.rdma_devices) {
    if (!d.fw_ver.empty()) firmware.push_back((d.hca_type.empty() ? d.name : d.hca_type) + " " + d.fw_ver);
    for (const auto& p : d.ports) {
      if (!active(p)) continue;
      ++active_ports;
      if (!p.link_layer.empty()) layers.push_back(p.link_layer);
      if (p.rate_gbps) rates.push_back(core::format_number(*p.rate_gbps) + " Gb/s");
      else rates_known = false;
      if (p.active_mtu) mtus.push_back(std::to_string(*p.active_mtu));
      else mtus_known = false;
      if (const Netdev* nd = node.find_netdev(p.netdev); nd && nd->mtu) netdev_mtus.push_back(std::to_string(*nd->mtu));
      if (p.link_layer == "Ethernet") {
        for (const auto& g : p.gids)
          if (g.type == "RoCE v2" && g.ipv4_mapped) {
            gid_indexes.push_back(std::to_string(g.index));
            break;
          }
      }
    }
  }
  a["rdma.active_ports"] = std::to_string(active_ports);
  a["rdma.link_layer"] = distinct(layers);
  a["rdma.rate"] = rates_known ? counted(rates) : "";
  a["rdma.active_mtu"] = mtus_known ? distinct(mtus) : "";
  a["net.rdma_mtu"] = distinct(netdev_mtus);
  a["roce.gid_index"] = distinct(gid_indexes);
  a["rdma.firmware"] = distinct(firmware);
  a["versions.nccl"] = node.versions.nccl;
  a["versions.cuda_driver"] = node.versions.cuda_driver;
  a["versions.nvidia_driver"] = node.versions.nvidia_driver;
  a["kernel.release"] = node.kernel.release;
  // Which peer-memory module serves GPUDirect RDMA; only meaningful on nodes with GPUs and HCAs.
  if (!node.gpus.empty() && !node.rdma_devices.empty()) {
    if (node.has_module("nvidia_peermem")) a["gdr.module"] = "nvidia_peermem";
    else if (node.has_module("nv_peer_mem")) a["gdr.module"] = "nv_peer_mem";
    else a["gdr.module"] = "none";
  } else {
    a["gdr.module"] = "";
  }
  if (plan) {
    for (const auto& v : plan->vars) a["env." + v.name] = v.value;
    // A variable one node plans and another does not is a difference too: "(unset)" marks it
    // once rank 0 sees the union (consistency.cpp).
  }
  return a;
}

NodeSummary summarize_node(int rank, const NodeInfo& node, const ncclenv::EnvPlan* plan,
                           const std::vector<Finding>& findings) {
  NodeSummary s;
  s.rank = rank;
  s.name = node.hostname;
  s.fabscope_version = FABSCOPE_VERSION;
  s.attributes = node_attributes(node, plan);
  for (const auto& dev : node.rdma_devices)
    for (const auto& port : dev.ports)
      if (port.link_layer == "InfiniBand" && port.lid && *port.lid != 0 && *port.lid < 0xc000 &&
          s.ib_ports.size() < kMaxIbPorts)
        s.ib_ports.push_back({port_name(dev, port), *port.lid, dev.node_guid, port.state});
  // The top-of-rack switch: the LLDP neighbour of the first ACTIVE RoCE port's netdev (or of
  // its bond's slaves), the system name else the chassis id.
  for (const auto& dev : node.rdma_devices) {
    for (const auto& port : dev.ports) {
      if (port.link_layer != "Ethernet" || port.state != "ACTIVE" || port.netdev.empty()) continue;
      std::vector<std::string> names{port.netdev};
      for (const auto& b : node.bonds)
        if (b.name == port.netdev)
          for (const auto& sl : b.slaves) names.push_back(sl.name);
      for (const auto& name : names)
        for (const auto& nd : node.netdevs)
          if (nd.name == name && !nd.lldp_neighbors.empty() && s.tor_switch.empty()) {
            const auto& nb = nd.lldp_neighbors.front();
            s.tor_switch = nb.chassis_name.empty() ? nb.chassis_id : nb.chassis_name;
            s.tor_port = nb.port_id.empty() ? nb.port_descr : nb.port_id;
          }
      if (!s.tor_switch.empty()) break;
    }
    if (!s.tor_switch.empty()) break;
  }
  std::size_t dropped = 0;
  for (const auto& f : findings) {
    if (f.severity < Severity::Warn) continue;
    if (s.findings.size() < kMaxFindingsPerNode) s.findings.push_back(f);
    else ++dropped;
  }
  if (dropped) {
    Finding more;
    more.id = "cluster.node_fails_check";
    more.severity = Severity::Info;
    more.subject = "node";
    more.message = std::to_string(dropped) + " more findings not sent (fabscope check on the node lists them)";
    s.findings.push_back(more);
  }
  return s;
}

void to_json(json& j, const NodeSummary& s) {
  j = json{{"schema", "fabscope.cluster.node"}, {"schema_version", NodeSummary::kSchemaVersion},
           {"rank", s.rank}, {"name", s.name}, {"fabscope_version", s.fabscope_version},
           {"attributes", s.attributes}, {"findings", s.findings}, {"pair_address", s.pair_address},
           {"rdma_address", s.rdma_address}, {"rdma_note", s.rdma_note}, {"nccl_device", s.nccl_device},
           {"nccl_note", s.nccl_note}, {"error", s.error}};
  json ports = json::array();
  for (const auto& p : s.ib_ports)
    ports.push_back({{"port", p.port}, {"lid", p.lid}, {"node_guid", p.node_guid}, {"state", p.state}});
  j["ib_ports"] = std::move(ports);
  j["tor_switch"] = s.tor_switch;
  j["tor_port"] = s.tor_port;
}

NodeSummary summary_from_json(const json& j) {
  auto field = [&](const char* name, json::value_t type) -> const json& {
    auto it = j.find(name);
    if (it == j.end()) throw Error(std::string("node summary: field '") + name + "' missing");
    if (it->type() != type && !(type == json::value_t::number_integer && it->is_number_integer()))
      throw Error(std::string("node summary: field '") + name + "' has the wrong type (" + it->type_name() + ")");
    return *it;
  };
  // A plain get<int>() would truncate: a rank of 2^32 + 1 read as 1 took rank 1's place.
  auto small_int = [&](const char* name, long long lo, long long hi) {
    const json& v = field(name, json::value_t::number_integer);
    if (v.is_number_unsigned() ? v.get<unsigned long long>() > static_cast<unsigned long long>(hi)
                               : v.get<long long>() < lo || v.get<long long>() > hi)
      throw Error(std::string("node summary: field '") + name + "' out of range: " + v.dump());
    return static_cast<int>(v.get<long long>());
  };
  if (!j.is_object()) throw Error("node summary: not a JSON object");
  if (field("schema", json::value_t::string).get<std::string>() != "fabscope.cluster.node")
    throw Error("node summary: schema is not fabscope.cluster.node");
  const int version = small_int("schema_version", 0, 1'000'000);
  if (version != NodeSummary::kSchemaVersion)
    throw Error("node summary: schema_version " + std::to_string(version) + ", this fabscope reads " +
                std::to_string(NodeSummary::kSchemaVersion));
  NodeSummary s;
  s.rank = small_int("rank", 0, 1'000'000);
  s.name = field("name", json::value_t::string).get<std::string>();
  s.fabscope_version = field("fabscope_version", json::value_t::string).get<std::string>();
  s.pair_address = field("pair_address", json::value_t::string).get<std::string>();
  s.error = field("error", json::value_t::string).get<std::string>();
  // Added after the first release of the summary: absent from an older sender means "no RDMA
  // endpoint offered" (its version is flagged by cluster.version_mismatch anyway).
  for (auto [name, into] : {std::pair{"rdma_address", &s.rdma_address}, std::pair{"rdma_note", &s.rdma_note},
                            std::pair{"tor_switch", &s.tor_switch}, std::pair{"tor_port", &s.tor_port},
                            std::pair{"nccl_device", &s.nccl_device}, std::pair{"nccl_note", &s.nccl_note}})
    if (j.contains(name)) *into = field(name, json::value_t::string).get<std::string>();
  // Added with fabric localization: absent from an older sender means "none reported".
  if (j.contains("ib_ports")) {
    const json& ports = field("ib_ports", json::value_t::array);
    if (ports.size() > kMaxIbPorts)
      throw Error("node summary: " + std::to_string(ports.size()) + " ib_ports, at most " +
                  std::to_string(kMaxIbPorts) + " are sent");
    for (const auto& p : ports) {
      if (!p.is_object()) throw Error("node summary: an ib_ports entry is not an object");
      IbPortFact f;
      for (auto [name, into] : {std::pair{"port", &f.port}, std::pair{"node_guid", &f.node_guid},
                                std::pair{"state", &f.state}}) {
        auto it = p.find(name);
        if (it == p.end() || !it->is_string())
          throw Error(std::string("node summary: ib_ports entry field '") + name + "' missing or not a string");
        *into = it->get<std::string>();
      }
      auto lid = p.find("lid");
      if (lid == p.end() || !lid->is_number_unsigned() || lid->get<unsigned long long>() > 0xffff)
        throw Error("node summary: ib_ports entry '" + f.port + "': lid missing or not a 16-bit number");
      f.lid = static_cast<std::uint32_t>(lid->get<unsigned long long>());
      s.ib_ports.push_back(std::move(f));
    }
  }
  const json& attrs = field("attributes", json::value_t::object);
  for (auto it = attrs.begin(); it != attrs.end(); ++it) {
    if (!it.value().is_string()) throw Error("node summary: attribute '" + it.key() + "' is not a string");
    s.attributes[it.key()] = it.value().get<std::string>();
  }
  const json& fs = field("findings", json::value_t::array);
  if (fs.size() > kMaxFindingsPerNode + 1)
    throw Error("node summary: " + std::to_string(fs.size()) + " findings, at most " +
                std::to_string(kMaxFindingsPerNode + 1) + " are sent");
  for (const auto& f : fs) {
    try {
      s.findings.push_back(f.get<Finding>());
    } catch (const std::exception& e) {
      throw Error(std::string("node summary: a finding is malformed: ") + e.what());
    }
  }
  return s;
}

}  // namespace fabscope::cluster
