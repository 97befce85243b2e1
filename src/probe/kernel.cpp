#include "probe/kernel.hpp"

#include <algorithm>

#include "probe/read_util.hpp"

namespace fabscope::probe {

const std::vector<std::string>& known_sysctls() {
  static const std::vector<std::string> names = {
      // Socket buffers: NCCL's socket transport and bootstrap (NCCL docs recommend >= 16 MiB).
      "net.core.rmem_max", "net.core.wmem_max", "net.core.rmem_default", "net.core.wmem_default",
      "net.core.optmem_max", "net.core.netdev_max_backlog", "net.core.somaxconn",
      "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_mtu_probing",
      "net.ipv4.tcp_congestion_control", "net.ipv4.tcp_timestamps", "net.ipv4.tcp_sack",
      // NCCL's bootstrap and socket transport listen on ephemeral ports (bind to port 0).
      "net.ipv4.ip_local_port_range",
      // Multi-rail RoCE: strict reverse-path filtering or ARP replies from the wrong interface
      // break connections between same-subnet rails.
      "net.ipv4.conf.all.rp_filter", "net.ipv4.conf.default.rp_filter",
      "net.ipv4.conf.all.arp_ignore", "net.ipv4.conf.all.arp_announce",
      "net.ipv4.conf.all.accept_local", "net.ipv6.conf.all.disable_ipv6",
      // Memory placement: NUMA balancing migrates pinned-buffer neighbours; zone reclaim stalls.
      "kernel.numa_balancing", "vm.zone_reclaim_mode", "vm.max_map_count", "vm.nr_hugepages",
      "vm.overcommit_memory", "kernel.pid_max"};
  return names;
}

namespace {
std::string sysctl_path(const std::string& dotted) {
  std::string p = "proc/sys/" + dotted;
  // Only fixed names come here: per-interface keys are built directly, since interface names
  // may contain '.' (VLANs: eth0.100).
  std::replace(p.begin(), p.end(), '.', '/');
  return p;
}

void read_sysctl(const core::Root& root, const std::string& dotted, const std::string& rel,
                 KernelInfo& k) {
  auto text = root.read(rel, 4096);
  if (!text) return;
  std::string v;
  // Multi-value sysctls (tcp_rmem) are tab-separated: normalise to single spaces.
  for (const auto& w : core::split_ws(*text)) v += (v.empty() ? "" : " ") + w;
  if (!v.empty() && is_valid_utf8(v)) k.sysctls[dotted] = std::move(v);
}
}  // namespace

std::vector<std::string> parse_modules(std::string_view text) {
  std::vector<std::string> out;
  for (const auto& line : core::split(text, '\n')) {
    auto sp = line.find(' ');
    std::string name = line.substr(0, sp);
    if (name.empty() || name.size() > 64) continue;
    bool ok = std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
    if (ok) out.push_back(std::move(name));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Limit parse_memlock(std::string_view text) {
  Limit out;
  for (const auto& line : core::split(text, '\n')) {
    if (!core::starts_with(line, "Max locked memory")) continue;
    auto fields = core::split_ws(std::string_view(line).substr(17));
    auto value = [](const std::string& f) -> std::optional<std::uint64_t> {
      if (f == "unlimited") return kUnlimited;
      return core::parse_u64(f);
    };
    if (fields.size() >= 1) out.soft = value(fields[0]);
    if (fields.size() >= 2) out.hard = value(fields[1]);
    break;
  }
  return out;
}

KernelInfo collect_kernel(const core::Root& root, std::vector<std::string>& notes,
                          const std::vector<std::string>& rdma_netdevs) {
  KernelInfo k;
  NotedReader r(root, notes);
  k.release = r.text("proc/sys/kernel/osrelease", true).value_or("");
  if (auto mods = root.read("proc/modules", 1 << 20)) k.modules = parse_modules(*mods);
  else notes.push_back("proc/modules: unreadable, loaded modules unknown");
  if (auto cmd = root.read("proc/cmdline", 8192)) {
    auto t = core::trim(*cmd);
    if (std::any_of(t.begin(), t.end(), [](char c) { return c == '\0'; }) || !is_valid_utf8(t)) {
      notes.push_back("proc/cmdline: not text (NUL bytes or invalid UTF-8), left out");
    } else {
      k.cmdline = std::string(t);
    }
  }
  for (const auto& name : known_sysctls()) read_sysctl(root, name, sysctl_path(name), k);
  for (const auto& dev : rdma_netdevs) {
    if (dev.empty() || dev.find('/') != std::string::npos || dev == "." || dev == "..") continue;
    for (const char* key : {"rp_filter", "arp_ignore", "arp_announce", "accept_local"}) {
      read_sysctl(root, "net.ipv4.conf." + dev + "." + key, "proc/sys/net/ipv4/conf/" + dev + "/" + key, k);
    }
  }
  if (auto limits = root.read("proc/self/limits", 16384)) {
    auto lim = parse_memlock(*limits);
    k.memlock_soft_bytes = lim.soft;
    k.memlock_hard_bytes = lim.hard;
    if (!lim.soft || !lim.hard) notes.push_back("proc/self/limits: 'Max locked memory' missing or not a number");
  } else {
    notes.push_back("proc/self/limits: unreadable, memlock limit unknown");
  }
  return k;
}

}  // namespace fabscope::probe
