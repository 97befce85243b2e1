#include "probe/replay.hpp"

#include "core/json.hpp"
#include "probe/rdma.hpp"
#include "probe/verbs.hpp"

namespace fabscope::probe {

namespace {
constexpr std::size_t kMaxManifestBytes = 32u << 20;
constexpr std::size_t kMaxOutputBytes = 16u << 20;
}  // namespace

std::string tool_status_name(ToolResult::Status s) {
  switch (s) {
    case ToolResult::Status::Ran: return "ran";
    case ToolResult::Status::NotFound: return "not_found";
    case ToolResult::Status::TimedOut: return "timed_out";
    case ToolResult::Status::Failed: return "failed";
  }
  return "failed";
}

std::optional<ToolResult::Status> parse_tool_status(const std::string& name) {
  for (auto s : {ToolResult::Status::Ran, ToolResult::Status::NotFound, ToolResult::Status::TimedOut,
                 ToolResult::Status::Failed})
    if (tool_status_name(s) == name) return s;
  return std::nullopt;
}

ToolRunner CaptureReplay::runner() const {
  return [tools = tools](const std::vector<std::string>& argv, int, std::size_t max_bytes) {
    ToolResult r;
    const std::string name = argv.empty() ? std::string() : argv[0];
    auto it = tools.find(name);
    if (it == tools.end()) {
      r.error = name + ": not run when the tree was captured";
      return r;
    }
    r = it->second;
    if (r.out.size() > max_bytes) r.out.resize(max_bytes);
    return r;
  };
}

std::optional<CaptureReplay> load_capture_replay(const core::Root& root, std::vector<std::string>& notes) {
  if (!root.exists(kCaptureManifest)) return std::nullopt;
  CaptureReplay rp;
  auto text = root.read(kCaptureManifest, kMaxManifestBytes);
  json m;
  try {
    if (text) m = json::parse(*text);
  } catch (const json::exception&) {
    m = json();
  }
  if (!m.is_object() || m.value("schema", "") != "fabscope.capture") {
    notes.push_back(std::string(kCaptureManifest) + ": not a capture manifest, tools and libraries not replayed");
    return rp;
  }
  rp.live = m.value("live", false);
  if (auto cmds = m.find("commands"); cmds != m.end() && cmds->is_array()) {
    for (const auto& c : *cmds) {
      if (!c.is_object() || !c.contains("argv") || !c["argv"].is_array() || c["argv"].empty() ||
          !c["argv"][0].is_string())
        continue;
      const std::string name = c["argv"][0].get<std::string>();
      ToolResult r;
      auto status = parse_tool_status(c.value("status", ""));
      if (!status) {
        notes.push_back(std::string(kCaptureManifest) + ": command " + name + " has no known status, not replayed");
        continue;
      }
      r.status = *status;
      if (c.contains("exit_code") && c["exit_code"].is_number_integer()) r.exit_code = c["exit_code"].get<int>();
      r.error = c.value("error", "");
      bool complete = true;
      for (auto [key, dst, cap] : {std::tuple{"stdout", &r.out, kMaxOutputBytes}, std::tuple{"stderr", &r.err, std::size_t{4096}}}) {
        const std::string rel = c.value(key, "");
        if (rel.empty()) continue;
        auto body = root.read(rel, cap);
        if (!body) {
          notes.push_back(rel + ": kept " + key + " of " + name + " unreadable, " + name + " not replayed");
          complete = false;
          break;
        }
        *dst = std::move(*body);
      }
      if (complete) rp.tools[name] = std::move(r);
    }
  }
  if (rp.live) {
    if (auto saved = root.read(kCaptureProbe, kMaxManifestBytes)) {
      try {
        rp.saved = json::parse(*saved).get<NodeInfo>();
      } catch (const std::exception& e) {
        notes.push_back(std::string(kCaptureProbe) + ": " + e.what() + "; library facts not replayed");
      }
    } else {
      notes.push_back(std::string(kCaptureProbe) + ": unreadable, library facts not replayed");
    }
  }
  return rp;
}

void apply_saved_live_facts(const NodeInfo& saved, NodeInfo& info) {
  info.verbs = saved.verbs;
  if (info.verbs) apply_verbs_active_mtu(info.rdma_devices, *info.verbs);
  for (auto& n : info.netdevs)
    if (const Netdev* s = saved.find_netdev(n.name)) n.ipv4 = s->ipv4;
  for (auto& l : info.lossless)
    for (const auto& s : saved.lossless)
      if (s.netdev == l.netdev) {
        l.pfc_priorities = s.pfc_priorities;
        l.pfc_capable_tcs = s.pfc_capable_tcs;
        l.apps = s.apps;
        l.trust = s.trust;
        l.dcb_note = s.dcb_note;
      }
  info.versions.nccl = saved.versions.nccl;
  info.versions.nccl_code = saved.versions.nccl_code;
  info.versions.cuda_driver = saved.versions.cuda_driver;
  info.versions.cuda_runtime = saved.versions.cuda_runtime;
  for (auto& g : info.gpus)
    for (const auto& s : saved.gpus)
      if (s.pci_address == g.pci_address && s.source == "nvml") {
        g.name = s.name;
        g.uuid = s.uuid;
        g.nvlink_total = s.nvlink_total;
        g.nvlink_active = s.nvlink_active;
        g.nvlinks = s.nvlinks;
        g.nvlink_data_transmitted_bytes = s.nvlink_data_transmitted_bytes;
        g.nvlink_data_received_bytes = s.nvlink_data_received_bytes;
        g.nvlink_raw_transmitted_bytes = s.nvlink_raw_transmitted_bytes;
        g.nvlink_raw_received_bytes = s.nvlink_raw_received_bytes;
        g.source = s.source;
      }
}

}  // namespace fabscope::probe
