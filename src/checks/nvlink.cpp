// nvlink.*: the GPUs' NVLinks as NVML reports them (probe/nvlink.cpp). Inside a node NCCL's
// traffic goes over NVLink; a link that trained down, a link that replays, or a pair that falls
// back to PCIe makes the intra-node part of every collective slow, with no error anywhere.
#include <map>

#include "checks/families.hpp"
#include "core/nvlink_models.hpp"

namespace fabscope::checks {

namespace {

std::string gpu_subject(const Gpu& g) { return "GPU" + std::to_string(g.index) + " " + g.pci_address; }

std::string links_text(const std::vector<int>& links) {
  std::string s;
  for (int l : links) s += (s.empty() ? "" : ",") + std::to_string(l);
  return s;
}

// The counters that stay zero on a healthy link. CRC data and ECC data errors are corrected
// and counted on healthy H200 links too (tests/fixtures/nvml-h200x2: hundreds per link, growing
// with traffic), so they are shown and exported, not judged.
struct Counter {
  const char* name;
  std::optional<std::uint64_t> NvLink::*field;
};
constexpr Counter kJudged[] = {{"replay", &NvLink::replay_errors},
                               {"recovery", &NvLink::recovery_errors},
                               {"CRC flit", &NvLink::crc_flit_errors}};

bool has_nvlink(const GpuPair& p) { return p.nvlinks.value_or(0) > 0 || p.level.rfind("NV", 0) == 0; }

void judge_links(const NodeInfo& node, const Gpu& g, std::vector<Finding>& out) {
  if (g.nvlinks.empty()) return;
  std::vector<int> down;
  for (const auto& l : g.nvlinks)
    if (l.active == false) down.push_back(l.link);
  const int present = static_cast<int>(g.nvlinks.size());
  const int up = present - static_cast<int>(down.size());
  if (!down.empty()) {
    out.push_back(make_finding(
        "nvlink.links_down", Severity::Warn, gpu_subject(g),
        gpu_subject(g) + " has " + std::to_string(down.size()) + " of its " + std::to_string(present) +
            " NVLinks down: its NVLink bandwidth is " + std::to_string(up) + "/" + std::to_string(present) +
            " of what it should be, and every intra-node collective it takes part in runs at that rate",
        "links down: " + links_text(down) + " (nvmlDeviceGetNvLinkState); up " + std::to_string(up) + "/" +
            std::to_string(present),
        "check nvidia-smi nvlink -s and -e on the GPU; reset it when idle (nvidia-smi -r -i " +
            std::to_string(g.index) + ") or reboot; if the link stays down, the GPU board or the NVSwitch "
            "tray needs service (nvidia-bug-report.sh for the vendor)"));
  }
  // Fewer links than the model has: only judged with two or more GPUs, where NVLink carries
  // traffic (one GPU passed through alone reports none at all: tests/fixtures/nvml-h200x1).
  auto usual = usual_nvlink_count(g.name);
  if (usual && node.gpus.size() >= 2 && present < *usual) {
    out.push_back(make_finding(
        "nvlink.links_missing", Severity::Warn, gpu_subject(g),
        gpu_subject(g) + " (" + g.name + ") reports " + std::to_string(present) + " NVLinks where the model has " +
            std::to_string(*usual) + ": the missing links carry nothing",
        "links reported by NVML: " + std::to_string(present) + "; usual for " + g.name + ": " + std::to_string(*usual),
        "compare with nvidia-smi nvlink -s and nvidia-smi topo -m; a virtual machine may be given the GPU "
        "without its NVLinks (pass the NVSwitches through with the GPUs, or use the host's fabric manager); "
        "on bare metal check nvidia-fabricmanager and the board"));
  }
  std::map<std::string, std::uint64_t> totals;
  std::vector<int> bad_links;
  for (const auto& l : g.nvlinks) {
    bool bad = false;
    for (const auto& c : kJudged)
      if (auto v = l.*(c.field); v && *v > 0) {
        totals[c.name] += *v;
        bad = true;
      }
    if (bad) bad_links.push_back(l.link);
  }
  if (bad_links.empty()) return;
  std::string ev;
  for (const auto& [name, v] : totals) ev += (ev.empty() ? "" : ", ") + name + " " + std::to_string(v);
  out.push_back(make_finding(
      "nvlink.errors", Severity::Warn, gpu_subject(g),
      gpu_subject(g) + "'s NVLinks counted errors since the driver loaded: replays and recoveries "
          "retransmit or retrain the link, taking bandwidth from every transfer on it",
      ev + " on links " + links_text(bad_links) + " (nvmlDeviceGetNvLinkErrorCounter)",
      "watch whether they grow (fabscope check --interval 60, or the exporter's "
      "fabscope_gpu_nvlink_errors_total); growing counts on one link point at the link: reset the GPU "
      "when idle, then have the board or NVSwitch tray serviced if they keep growing"));
}

}  // namespace

std::vector<Finding> check_nvlink(const NodeInfo& node) {
  std::vector<Finding> out;
  for (const auto& g : node.gpus) judge_links(node, g, out);
  // Topology asymmetry: some pairs have NVLink, this one does not: NCCL's ring or tree crosses
  // PCIe (or the CPU) for it, and the whole collective runs at that pair's speed.
  bool any_nvlink = false;
  for (const auto& p : node.gpu_topology) any_nvlink = any_nvlink || has_nvlink(p);
  for (const auto& p : node.gpu_topology) {
    const std::string subject = p.gpu_a + "-" + p.gpu_b;
    if (any_nvlink && !has_nvlink(p) && !p.level.empty()) {
      out.push_back(make_finding(
          "nvlink.topology_asymmetric", Severity::Warn, subject,
          "GPUs " + p.gpu_a + " and " + p.gpu_b + " reach each other over " + p.level +
              " while other pairs of this node have NVLink: NCCL's rings and trees through this pair run "
              "at PCIe speed",
          "level " + p.level + " (" + p.source + "), other pairs NV#",
          "compare with nvidia-smi topo -m; look for links down on either GPU (nvidia-smi nvlink -s), "
          "a GPU the NVSwitch fabric does not include (nvidia-fabricmanager's log), or a VM given "
          "only some NVSwitches"));
    }
    if (has_nvlink(p)) {
      std::string refused;
      using Cap = std::pair<const char*, const std::string*>;
      for (auto [what, status] : {Cap{"read", &p.p2p_read}, Cap{"write", &p.p2p_write}, Cap{"NVLink", &p.p2p_nvlink}})
        if (!status->empty() && *status != "ok") refused += (refused.empty() ? "" : ", ") + std::string(what) + " " + *status;
      if (!refused.empty()) {
        out.push_back(make_finding(
            "nvlink.p2p_disabled", Severity::Warn, subject,
            "GPUs " + p.gpu_a + " and " + p.gpu_b + " have NVLink (" + p.level +
                ") but peer-to-peer access between them is refused: NCCL copies through host memory "
                "instead of over the links",
            "nvmlDeviceGetP2PStatus: " + refused,
            "disabled_by_regkey: the driver was loaded with a registry key that turns P2P off "
            "(NVreg_RegistryDwords in /etc/modprobe.d/*.conf): remove it and reload the driver; otherwise "
            "check what nvidia-smi topo -p2p rw says and that the VM or container gives both GPUs the "
            "peer mappings"));
      }
    }
  }
  return out;
}

std::vector<Finding> check_nvlink_rates(const NodeInfo& before, const NodeInfo& after, double seconds) {
  std::vector<Finding> out;
  for (const auto& g : after.gpus) {
    const Gpu* old = nullptr;
    for (const auto& o : before.gpus)
      if (o.pci_address == g.pci_address) old = &o;
    if (!old) continue;
    std::map<std::string, std::uint64_t> grew;
    std::vector<int> links;
    for (const auto& l : g.nvlinks)
      for (const auto& ol : old->nvlinks) {
        if (ol.link != l.link) continue;
        bool any = false;
        for (const auto& c : kJudged) {
          auto now = l.*(c.field), then = ol.*(c.field);
          if (now && then && *now > *then) {
            grew[c.name] += *now - *then;
            any = true;
          }
        }
        if (any) links.push_back(l.link);
      }
    if (links.empty()) continue;
    std::string ev;
    for (const auto& [name, v] : grew) ev += (ev.empty() ? "" : ", ") + name + " +" + std::to_string(v);
    out.push_back(make_finding(
        "nvlink.errors_growing", Severity::Warn, gpu_subject(g),
        gpu_subject(g) + "'s NVLink error counters grew in " + format_number(seconds) +
            " s: a link that fails now, not one that failed once",
        ev + " on links " + links_text(links) + " over " + format_number(seconds) + " s",
        "drain the GPU's jobs, reset it (nvidia-smi -r -i " + std::to_string(g.index) +
            ") and check again; a link that keeps counting needs the board or NVSwitch tray serviced "
            "(nvidia-bug-report.sh for the vendor)"));
  }
  return out;
}

}  // namespace fabscope::checks
