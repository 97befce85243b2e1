#include "checks/doctor.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "checks/families.hpp"
#include "checks/render.hpp"
#include "core/strings.hpp"

namespace fabscope::checks {

namespace {

std::string plural(std::size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string gpu_part(const NodeInfo& node) {
  if (node.gpus.empty()) return "no NVIDIA GPU";
  std::vector<std::string> names;
  for (const auto& g : node.gpus) {
    std::string n = g.name.empty() ? "model unknown" : g.name;
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  }
  std::set<std::string> links;
  bool nvlink_known = true;
  for (const auto& g : node.gpus) {
    if (!g.nvlink_total || !g.nvlink_active) {
      nvlink_known = false;
      break;
    }
    links.insert(std::to_string(*g.nvlink_active) + "/" + std::to_string(*g.nvlink_total));
  }
  std::string nvlink;
  if (!nvlink_known) nvlink = "NVLink not known: NVML is asked on a live node only";
  else if (links.size() == 1 && *links.begin() == "0/0") nvlink = "no NVLink";
  else nvlink = "NVLink " + core::join(std::vector<std::string>(links.begin(), links.end()), ", ") + " up";
  return plural(node.gpus.size(), "GPU", "GPUs") + " (" + core::join(names, ", ") + ", " + nvlink + ")";
}

struct Ports {
  int total = 0, active = 0;
  std::set<std::string> layers;
};

Ports count_ports(const NodeInfo& node) {
  Ports p;
  for (const auto& d : node.rdma_devices)
    for (const auto& port : d.ports) {
      ++p.total;
      if (port.state == "ACTIVE" || port.state == "ACTIVE_DEFER") ++p.active;
      if (!port.link_layer.empty()) p.layers.insert(port.link_layer == "Ethernet" ? "RoCE" : port.link_layer);
    }
  return p;
}

std::string rdma_part(const NodeInfo& node, const Ports& ports) {
  if (node.rdma_devices.empty()) return "no RDMA device";
  std::vector<std::string> names;
  for (const auto& d : node.rdma_devices) names.push_back(d.name);
  std::string s = plural(node.rdma_devices.size(), "RDMA device", "RDMA devices") + " (" +
                  core::join(names, ", ") + "; " + std::to_string(ports.active) + "/" +
                  std::to_string(ports.total) + " ports ACTIVE";
  if (!ports.layers.empty())
    s += ", " + core::join(std::vector<std::string>(ports.layers.begin(), ports.layers.end()), "+");
  return s + ")";
}

std::string data_netdevs(const NodeInfo& node) {
  std::vector<std::string> out;
  for (const auto& n : node.netdevs) {
    if (n.is_virtual || n.operstate == "down") continue;
    out.push_back(n.name + (n.mtu ? " (MTU " + std::to_string(*n.mtu) + ")" : std::string()));
  }
  return core::join(out, ", ");
}

std::string gdr_state(const NodeInfo& node) {
  if (node.kernel.modules.empty()) return "unknown";
  return node.has_module("nvidia_peermem") || node.has_module("nv_peer_mem") ? "loaded" : "missing";
}

}  // namespace

DoctorReport diagnose_node(const NodeInfo& node, std::vector<Finding> findings) {
  DoctorReport r;
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Finding& a, const Finding& b) { return a.severity > b.severity; });
  r.findings = std::move(findings);
  switch (worst(r.findings)) {
    case Severity::Fail: r.verdict = "broken"; break;
    case Severity::Warn: r.verdict = "degraded"; break;
    default: r.verdict = "healthy"; break;
  }

  const Ports ports = count_ports(node);
  const bool gpus = !node.gpus.empty(), rdma = !node.rdma_devices.empty();
  std::string consequence;
  if (gpus && !rdma) {
    r.transport = "sockets";
    std::string nets = data_netdevs(node);
    consequence = "multi-node NCCL traffic would use TCP sockets" + (nets.empty() ? "" : " over " + nets);
  } else if (gpus && ports.active == 0) {
    r.transport = "sockets";
    consequence = "no RDMA port is ACTIVE, so multi-node NCCL traffic would fall back to TCP sockets";
  } else if (gpus) {
    r.transport = "rdma";
    std::string gdr = gdr_state(node);
    bool hw = std::any_of(node.rdma_devices.begin(), node.rdma_devices.end(), is_pci_rdma);
    consequence = "multi-node NCCL traffic can use RDMA (NET/IB)";
    if (!hw) consequence += "; GPUDirect RDMA not possible (no HCA with a known PCI address)";
    else if (gdr == "loaded") consequence += " with GPUDirect RDMA (nvidia_peermem loaded)";
    else if (gdr == "missing") consequence += "; GPUDirect RDMA only through DMA-BUF (no nvidia_peermem)";
  } else if (rdma) {
    r.transport = "none";
    consequence = "no GPU here, so only the RDMA side is judged";
  } else {
    r.transport = "none";
    consequence = "not a GPU or RDMA node: nothing for fabscope to judge here";
  }
  r.description.push_back(gpu_part(node) + ", " + rdma_part(node, ports) + ": " + consequence + ".");

  std::vector<std::string> facts;
  if (!node.versions.nvidia_driver.empty()) facts.push_back("NVIDIA driver " + node.versions.nvidia_driver);
  if (!node.versions.nccl.empty()) facts.push_back("NCCL " + node.versions.nccl);
  else if (gpus) facts.push_back("NCCL version unknown (libnccl.so.2 is asked on a live node only)");
  if (!node.versions.cuda_driver.empty()) facts.push_back("CUDA driver " + node.versions.cuda_driver);
  if (!node.kernel.release.empty()) facts.push_back("kernel " + node.kernel.release);
  if (!facts.empty()) r.description.push_back(core::join(facts, ", ") + ".");
  if (!node.probe_notes.empty())
    r.description.push_back(plural(node.probe_notes.size(), "value", "values") +
                            (node.probe_notes.size() == 1 ? " could not be read and was not judged"
                                                          : " could not be read and were not judged") +
                            " (fabscope probe lists them).");

  // One step per id that warns or fails, with the subjects it concerns.
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::string, std::vector<std::string>>> steps;  // id -> remedy, subjects
  for (const auto& f : r.findings) {
    if (f.severity < Severity::Warn) continue;
    auto [it, fresh] = steps.try_emplace(f.id, f.remedy, std::vector<std::string>{});
    if (fresh) order.push_back(f.id);
    it->second.second.push_back(f.subject);
  }
  for (const auto& id : order) {
    const auto& [remedy, subjects] = steps[id];
    r.next_steps.push_back(id + " (" + core::join(subjects, ", ") + "): " + remedy);
  }
  if (gpus && !rdma) {
    std::string first;
    for (const auto& n : node.netdevs)
      if (!n.is_virtual && n.operstate != "down" && first.empty()) first = n.name;
    r.next_steps.push_back(
        "for multi-node jobs over sockets, pin NCCL to the data interface (NCCL_SOCKET_IFNAME=" +
        (first.empty() ? std::string("IFACE") : first) +
        "); for RDMA, the node needs InfiniBand or RoCE HCAs (then run fabscope doctor again)");
  }
  if (r.next_steps.empty()) r.next_steps.push_back("nothing to fix");
  return r;
}

std::string render_doctor_text(const NodeInfo& node, const DoctorReport& r, std::size_t width) {
  std::ostringstream os;
  os << "fabscope doctor: host " << (node.hostname.empty() ? std::string("(unknown)") : node.hostname) << "\n\n";
  for (const auto& d : r.description)
    for (const auto& l : wrap_lines(d, width - 2)) os << "  " << l << "\n";
  const SeverityCounts s = count_severities(r.findings);
  os << "\nverdict: " << r.verdict << " (" << counts_text(s) << ")\n";
  // Remedies are in the next steps below; the table keeps what was found and the values read.
  if (!r.findings.empty()) os << "\n" << render_findings(r.findings, width, false);
  os << "\nnext steps:\n";
  for (std::size_t i = 0; i < r.next_steps.size(); ++i) {
    std::string num = std::to_string(i + 1) + ".";
    std::string prefix = "  " + num + std::string(num.size() < 4 ? 4 - num.size() : 1, ' ');
    auto lines = wrap_lines(r.next_steps[i], width - prefix.size());
    for (std::size_t j = 0; j < lines.size(); ++j)
      os << (j == 0 ? prefix : std::string(prefix.size(), ' ')) << lines[j] << "\n";
  }
  // A saved probe's host name and values may come from anywhere: printable at print time.
  return core::printable_lines(os.str());
}

json doctor_json(const NodeInfo& node, const DoctorReport& r) {
  const SeverityCounts s = count_severities(r.findings);
  return json{{"schema", "fabscope.doctor"},
              {"schema_version", kDoctorSchemaVersion},
              {"hostname", node.hostname},
              {"verdict", r.verdict},
              {"transport", r.transport},
              {"gpus", node.gpus.size()},
              {"rdma_devices", node.rdma_devices.size()},
              {"description", r.description},
              {"findings", r.findings},
              {"summary", {{"fail", s.fail}, {"warn", s.warn}, {"info", s.info}, {"worst", to_string(worst(r.findings))}}},
              {"next_steps", r.next_steps},
              {"probe_notes", node.probe_notes},
              {"exit_code", exit_code_for(r.findings)}};
}

}  // namespace fabscope::checks
