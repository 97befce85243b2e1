#include "ncclenv/lint.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/root.hpp"
#include "core/strings.hpp"

namespace fabscope::ncclenv {

namespace {

constexpr const char* kDocs = "docs/ncclenv.md";

// "NCCL_X=v (where)"
std::string setting(const EnvEntry& e) { return e.key + "=" + e.value + " (" + e.where() + ")"; }

// NCCL reads numeric parameters with strtoll(value, &end, 0) and rejects trailing junk.
std::optional<std::int64_t> nccl_int(const std::string& v) {
  if (v.empty() || v.size() > 24) return std::nullopt;
  const std::string t(core::trim(v));
  if (t.size() != v.size()) return std::nullopt;
  bool neg = false;
  std::size_t i = 0;
  if (t[0] == '-' || t[0] == '+') neg = t[0] == '-', i = 1;
  int base = 10;
  if (t.size() > i + 2 && t[i] == '0' && (t[i + 1] == 'x' || t[i + 1] == 'X')) base = 16, i += 2;
  if (i >= t.size()) return std::nullopt;
  std::int64_t n = 0;
  for (; i < t.size(); ++i) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(t[i])));
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else return std::nullopt;
    if (n > (INT64_MAX - d) / base) return std::nullopt;
    n = n * base + d;
  }
  return neg ? -n : n;
}

bool truthy(const std::string& v) {
  auto n = nccl_int(v);
  return n && *n != 0;
}

struct Ctx {
  const NodeInfo& node;
  const std::vector<VarInfo>& vars;
  std::map<std::string, const EnvEntry*> eff;  // effective setting per key
  std::vector<Finding> out;

  const EnvEntry* get(const std::string& key) const {
    auto it = eff.find(key);
    return it == eff.end() ? nullptr : it->second;
  }
  const VarInfo* info(const std::string& key) const {
    for (const auto& v : vars)
      if (v.name == key) return &v;
    return nullptr;
  }
};

bool port_usable(const RdmaPort& p) { return p.state == "ACTIVE" && (p.phys_state == "LinkUp" || p.phys_state.empty()); }

// NCCL_* names that other software sets or reads. NCCL ignores them, so they are no typo.
struct ForeignName {
  const char* name;
  const char* replacement;  // nullptr: harmless, no finding
  const char* who;
};
constexpr ForeignName kForeign[] = {
    // NVIDIA's CUDA/PyTorch container images export the NCCL package version as image metadata.
    {"NCCL_VERSION", nullptr, "NVIDIA container images (package metadata)"},
    // PyTorch's process-group options under their pre-2.2 names (still honoured, deprecated).
    {"NCCL_ASYNC_ERROR_HANDLING", "TORCH_NCCL_ASYNC_ERROR_HANDLING", "PyTorch"},
    {"NCCL_BLOCKING_WAIT", "TORCH_NCCL_BLOCKING_WAIT", "PyTorch"},
    {"NCCL_DESYNC_DEBUG", "TORCH_NCCL_DESYNC_DEBUG", "PyTorch"},
    {"NCCL_ENABLE_TIMING", "TORCH_NCCL_ENABLE_TIMING", "PyTorch"},
};

void rule_unknown(Ctx& c, const EnvEntry& e) {
  if (c.info(e.key)) return;
  for (const auto& f : kForeign) {
    if (e.key != f.name) continue;
    if (f.replacement)
      c.out.push_back(
          make_finding("env.unknown_variable", Severity::Info, e.key,
                       e.key + " is read by " + f.who + ", not by NCCL, under a deprecated name", setting(e),
                       std::string("rename it to ") + f.replacement + " (" + e.where() + ")", kDocs));
    return;
  }
  const std::string close = closest_var(e.key, c.vars);
  const bool typo = !close.empty();
  c.out.push_back(
      make_finding("env.unknown_variable", Severity::Warn, e.key,
                   e.key + " is not an NCCL variable fabscope knows; NCCL ignores names it does not read" +
                       (typo ? ". Did you mean " + close + "?" : std::string()),
                   setting(e),
                   typo ? "rename it to " + close + " (" + e.where() + ")"
                        : "remove it, or check the name in NCCL's environment documentation",
                   kDocs));
}

void rule_value(Ctx& c, const EnvEntry& e) {
  const VarInfo* v = c.info(e.key);
  if (!v) return;
  auto bad = [&](const std::string& why, const std::string& remedy) {
    c.out.push_back(make_finding("env.bad_value", Severity::Warn, e.key, e.key + "='" + e.value + "': " + why,
                                 setting(e), remedy, kDocs));
  };
  if (e.value.empty()) {
    bad("empty, so NCCL treats it as unset and uses its default", "remove the line or give a value");
    return;
  }
  switch (v->type) {
    case VarType::Int:
    case VarType::Size:
    case VarType::Bool: {
      auto n = nccl_int(e.value);
      if (!n) {
        bad(std::string("NCCL reads a whole number here (") + to_string(v->type) +
                "); this is not one, so NCCL warns and keeps its default" +
                (v->type == VarType::Size ? " (sizes are plain bytes: no K/M/G suffix)" : ""),
            v->type == VarType::Bool ? "use 0 or 1" : "use a plain number");
        return;
      }
      if (v->type == VarType::Bool && *n != 0 && *n != 1) {
        bad("a switch takes 0 or 1; NCCL reads any other non-zero number as 1", "use 0 or 1");
        return;
      }
      if (v->type == VarType::Size && *n < 0) {
        bad("a size cannot be negative", "use a byte count");
        return;
      }
      if ((v->min && *n < *v->min) || (v->max && *n > *v->max)) {
        bad("outside the accepted range " + (v->min ? std::to_string(*v->min) : std::string("..")) + ".." +
                (v->max ? std::to_string(*v->max) : std::string("")),
            "use a value in range");
      }
      return;
    }
    case VarType::Enum: {
      const auto allowed = core::split(v->values, '|');
      const std::string u = core::upper(e.value);
      for (const auto& a : allowed)
        if (core::upper(a) == u) return;
      bad("not one of " + core::join(allowed, ", "), "use one of " + core::join(allowed, ", "));
      return;
    }
    case VarType::String:
    case VarType::List: return;
  }
}

void rule_debug(Ctx& c, const EnvEntry& e) {
  if (e.key == "NCCL_DEBUG") {
    const std::string u = core::upper(e.value);
    if (u == "INFO" || u == "TRACE")
      c.out.push_back(make_finding("env.debug_variable", Severity::Warn, e.key,
                                   "NCCL_DEBUG=" + e.value +
                                       " logs every communicator and connection: slow "
                                       "initialisation and huge logs at scale; for diagnosis only",
                                   setting(e), "use NCCL_DEBUG=WARN in production (" + e.where() + ")",
                                   kDocs));
    return;
  }
  const VarInfo* v = c.info(e.key);
  if (!v || v->category != Category::Debug) return;
  // Covered by their own rule.
  if (e.key == "NCCL_P2P_DISABLE" || e.key == "NCCL_SHM_DISABLE" || e.key == "NCCL_P2P_LEVEL") return;
  const bool logging = core::starts_with(e.key, "NCCL_DEBUG_");
  c.out.push_back(make_finding(
      "env.debug_variable", logging ? Severity::Info : Severity::Warn, e.key,
      logging ? e.key + " only shapes NCCL_DEBUG output; harmless, but a sign diagnosis "
                        "settings were left behind"
              : e.key + " is a debug-only setting (" + std::string(v->meaning) +
                    "); kept in production it forces behaviour NCCL would tune itself "
                    "and can cost bandwidth or hang",
      setting(e), "remove it once the issue it worked around is solved (" + e.where() + ")", kDocs));
}

void rule_hca(Ctx& c) {
  const EnvEntry* e = c.get("NCCL_IB_HCA");
  if (!e || e->value.empty()) return;
  if (const EnvEntry* d = c.get("NCCL_IB_DISABLE"); d && truthy(d->value)) return;  // contradiction says it
  const NameFilter f = parse_name_filter(e->value, true);
  if (c.node.rdma_devices.empty()) {
    c.out.push_back(make_finding("env.hca_matches_nothing", Severity::Warn, "NCCL_IB_HCA",
                                 "NCCL_IB_HCA is set but this node has no RDMA device", setting(*e),
                                 "remove NCCL_IB_HCA on nodes without RDMA, or install the HCA driver",
                                 kDocs));
    return;
  }
  std::vector<std::string> all;
  for (const auto& d : c.node.rdma_devices)
    for (const auto& p : d.ports) all.push_back(d.name + ":" + std::to_string(p.port));
  std::vector<std::string> selected, down;
  for (const auto& d : c.node.rdma_devices)
    for (const auto& p : d.ports) {
      if (!filter_selects(f, d.name, p.port)) continue;
      const std::string n = d.name + ":" + std::to_string(p.port);
      selected.push_back(n);
      if (!port_usable(p)) down.push_back(n + " " + (p.state.empty() ? "?" : p.state) + "/" +
                                          (p.phys_state.empty() ? "?" : p.phys_state));
    }
  if (selected.empty()) {
    c.out.push_back(
        make_finding("env.hca_matches_nothing", Severity::Fail, "NCCL_IB_HCA",
                     "NCCL_IB_HCA selects no RDMA port on this node: NCCL finds no IB device and falls back "
                     "to TCP sockets without an error",
                     setting(*e) + "; ports: " + core::join(all, ", "),
                     "list the data ports, e.g. fabscope env prints NCCL_IB_HCA for this node", kDocs));
    return;
  }
  if (!f.exclude) {
    for (const auto& item : f.items) {
      bool hit = false;
      for (const auto& d : c.node.rdma_devices)
        for (const auto& p : d.ports) hit = hit || filter_item_matches(f, item, d.name, p.port);
      if (!hit)
        c.out.push_back(make_finding(
            "env.hca_matches_nothing", Severity::Warn, "NCCL_IB_HCA",
            "NCCL_IB_HCA entry '" + item.name + (item.port >= 0 ? ":" + std::to_string(item.port) : "") +
                "' matches no RDMA port on this node",
            setting(*e) + "; ports: " + core::join(all, ", "),
            "fix or remove the entry (names as in ls /sys/class/infiniband)", kDocs));
    }
  }
  if (!down.empty()) {
    const bool all_down = down.size() == selected.size();
    c.out.push_back(make_finding(
        "env.hca_port_down", all_down ? Severity::Fail : Severity::Warn, "NCCL_IB_HCA",
        all_down ? "every port NCCL_IB_HCA selects is down: NCCL falls back to TCP sockets"
                 : "NCCL_IB_HCA selects ports that are not ACTIVE/LinkUp: NCCL uses fewer NICs "
                   "than listed, or fails to connect on them",
        setting(*e) + "; down: " + core::join(down, ", "),
        "bring the links up (fabscope check says why) or drop the ports from NCCL_IB_HCA", kDocs));
  }
}

void rule_ifname(Ctx& c) {
  const EnvEntry* e = c.get("NCCL_SOCKET_IFNAME");
  if (!e || e->value.empty() || c.node.netdevs.empty()) return;
  const NameFilter f = parse_name_filter(e->value, false);
  // A user's NCCL_SOCKET_IFNAME is matched as written: NCCL leaves loopback out only when it picks
  // an interface itself (no NCCL_SOCKET_IFNAME), so "lo" selects lo.
  std::vector<std::string> matched, up, all, others_up;
  auto is_up = [](const auto& n) { return n.operstate == "up" || (n.name == "lo" && n.operstate == "unknown"); };
  for (const auto& n : c.node.netdevs) {
    all.push_back(n.name + "(" + (n.operstate.empty() ? "?" : n.operstate) + ")");
    if (n.name != "lo" && n.operstate == "up") others_up.push_back(n.name);
    if (!filter_selects(f, n.name)) continue;
    matched.push_back(n.name);
    if (is_up(n)) up.push_back(n.name);
  }
  // The remedy names this node's own interfaces that are up (never a made-up eth0).
  const std::string suggest =
      others_up.empty() ? "no interface but lo is up on this node: bring up the one that reaches the other nodes "
                          "(ip -br addr), then name it"
                        : "name one that is up and reaches the other nodes, e.g. =" + others_up.front() +
                              " (up here: " + core::join(others_up, ", ") + ")";
  if (matched.empty() || up.empty()) {
    c.out.push_back(make_finding(
        "env.ifname_matches_nothing", Severity::Fail, "NCCL_SOCKET_IFNAME",
        matched.empty() ? "NCCL_SOCKET_IFNAME matches no interface on this node: NCCL's bootstrap "
                          "fails with 'no socket interface found'"
                        : "NCCL_SOCKET_IFNAME matches only interfaces that are not up (" +
                              core::join(matched, ", ") + ")",
        setting(*e) + "; interfaces: " + core::join(all, " "), suggest, kDocs));
    return;
  }
  if (std::all_of(up.begin(), up.end(), [](const std::string& n) { return n == "lo"; }))
    c.out.push_back(make_finding(
        "env.ifname_loopback", Severity::Warn, "NCCL_SOCKET_IFNAME",
        "NCCL_SOCKET_IFNAME selects only the loopback interface: NCCL's bootstrap and socket transport "
        "reach no other node, so a job across nodes fails at init (one node alone works)",
        setting(*e) + "; interfaces: " + core::join(all, " "),
        "for jobs across nodes: " + suggest, kDocs));
}

void rule_gid(Ctx& c) {
  const EnvEntry* e = c.get("NCCL_IB_GID_INDEX");
  if (!e) return;
  auto idx = nccl_int(e->value);
  if (!idx || *idx < 0) return;  // bad_value, or -1 (NCCL picks)
  const EnvEntry* hca = c.get("NCCL_IB_HCA");
  const NameFilter f = hca ? parse_name_filter(hca->value, true) : NameFilter{};
  for (const auto& d : c.node.rdma_devices)
    for (const auto& p : d.ports) {
      if (p.link_layer != "Ethernet" || p.gids.empty() || !port_usable(p)) continue;
      if (hca && !filter_selects(f, d.name, p.port)) continue;
      const std::string n = d.name + ":" + std::to_string(p.port);
      const GidEntry* g = nullptr;
      const GidEntry* v4 = nullptr;
      for (const auto& x : p.gids) {
        if (x.index == *idx) g = &x;
        if (!v4 && x.type == "RoCE v2" && x.ipv4_mapped) v4 = &x;
      }
      const std::string better = v4 ? " (the IPv4 RoCE v2 entry is index " + std::to_string(v4->index) + ")" : "";
      const std::string remedy = v4 ? "NCCL_IB_GID_INDEX=" + std::to_string(v4->index) +
                                          ", or leave it unset with NCCL >= 2.21"
                                    : "give the port's netdev an IPv4 address, or leave NCCL_IB_GID_INDEX unset";
      if (!g) {
        c.out.push_back(make_finding("env.gid_index_invalid", Severity::Fail, n,
                                     "GID index " + std::to_string(*idx) + " is empty on " + n +
                                         ": creating NCCL's queue pairs fails" + better,
                                     setting(*e), remedy, kDocs));
      } else if (g->type == "IB/RoCE v1") {
        c.out.push_back(make_finding(
            "env.gid_index_invalid", Severity::Warn, n,
            "GID index " + std::to_string(*idx) + " on " + n +
                " is RoCE v1: not routable across IP subnets, and peers on v2 cannot talk to it" + better,
            setting(*e) + "; gid[" + std::to_string(g->index) + "]=" + g->gid + " " + g->type, remedy,
            kDocs));
      } else if (g->type == "RoCE v2" && !g->ipv4_mapped && v4) {
        c.out.push_back(make_finding("env.gid_index_invalid", Severity::Warn, n,
                                     "GID index " + std::to_string(*idx) + " on " + n +
                                         " is not the IPv4 entry (a link-local or IPv6 address)" + better,
                                     setting(*e) + "; gid[" + std::to_string(g->index) + "]=" + g->gid,
                                     remedy, kDocs));
      }
    }
}

void rule_ib_disabled(Ctx& c) {
  const EnvEntry* e = c.get("NCCL_IB_DISABLE");
  if (!e || !truthy(e->value)) return;
  std::vector<std::string> active;
  for (const auto& d : c.node.rdma_devices)
    for (const auto& p : d.ports)
      if (port_usable(p)) active.push_back(d.name + ":" + std::to_string(p.port));
  if (active.empty()) return;
  c.out.push_back(
      make_finding("env.ib_disabled_with_rdma", Severity::Warn, "NCCL_IB_DISABLE",
                   "NCCL_IB_DISABLE=1 while RDMA ports are active: NCCL uses TCP sockets between nodes, a "
                   "fraction of the RDMA bandwidth",
                   setting(*e) + "; active: " + core::join(active, ", "),
                   "remove NCCL_IB_DISABLE (" + e->where() + ")", kDocs));
}

void rule_p2p_shm(Ctx& c) {
  for (const char* key : {"NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_P2P_LEVEL"}) {
    const EnvEntry* e = c.get(key);
    if (!e) continue;
    const bool p2p_level = std::string(key) == "NCCL_P2P_LEVEL";
    const bool off = p2p_level ? (core::upper(e->value) == "LOC" || e->value == "0") : truthy(e->value);
    if (!off) continue;
    const bool shm = std::string(key) == "NCCL_SHM_DISABLE";
    c.out.push_back(
        make_finding("env.p2p_or_shm_disabled", Severity::Warn, key,
                     shm ? "NCCL_SHM_DISABLE turns off shared memory between processes on one node: traffic "
                           "between them goes through the network instead"
                         : std::string(key) + "=" + e->value +
                               " turns off GPU peer-to-peer (NVLink/PCIe) "
                               "inside the node: transfers are staged through "
                               "host memory, many times slower",
                     setting(*e),
                     "remove it; if P2P hangs or corrupts data, fix the cause (IOMMU/ACS on PCIe bridges, "
                     "see fabscope check pcie.acs_enabled) rather than disabling P2P",
                     kDocs));
  }
}

void rule_contradiction(Ctx& c) {
  auto contra = [&](Severity sev, const std::string& subject, const std::string& msg, const std::string& ev,
                    const std::string& remedy) {
    c.out.push_back(make_finding("env.contradiction", sev, subject, msg, ev, remedy, kDocs));
  };
  const EnvEntry* dis = c.get("NCCL_IB_DISABLE");
  if (dis && truthy(dis->value)) {
    std::vector<std::string> ib;
    for (const auto& [k, e] : c.eff)
      if (core::starts_with(k, "NCCL_IB_") && k != "NCCL_IB_DISABLE") ib.push_back(setting(*e));
    if (!ib.empty())
      contra(
          Severity::Warn, "NCCL_IB_DISABLE",
          "NCCL_IB_DISABLE=1 turns the IB transport off, yet other NCCL_IB_* settings are given: they have "
          "no effect",
          setting(*dis) + "; " + core::join(ib, "; "),
          "decide: remove NCCL_IB_DISABLE, or the NCCL_IB_* settings");
    if (const EnvEntry* net = c.get("NCCL_NET"); net && core::upper(net->value) == "IB")
      contra(Severity::Fail, "NCCL_NET",
             "NCCL_NET=IB requires the IB transport, which NCCL_IB_DISABLE=1 turns off: communicator creation fails",
             setting(*net) + "; " + setting(*dis), "remove one of the two");
  }
  if (const EnvEntry* net = c.get("NCCL_NET"); net && core::upper(net->value) == "SOCKET") {
    if (const EnvEntry* hca = c.get("NCCL_IB_HCA"))
      contra(Severity::Warn, "NCCL_NET",
             "NCCL_NET=Socket forces TCP sockets, yet NCCL_IB_HCA selects RDMA ports: the HCA list is unused",
             setting(*net) + "; " + setting(*hca), "remove NCCL_NET=Socket to use RDMA");
  }
  for (auto [lo, hi] : {std::pair<const char*, const char*>{"NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS"},
                        {"NCCL_MIN_CTAS", "NCCL_MAX_CTAS"},
                        {"NCCL_MIN_P2P_NCHANNELS", "NCCL_MAX_P2P_NCHANNELS"}}) {
    const EnvEntry* a = c.get(lo);
    const EnvEntry* b = c.get(hi);
    if (!a || !b) continue;
    auto x = nccl_int(a->value), y = nccl_int(b->value);
    if (x && y && *x > *y)
      contra(Severity::Warn, lo, std::string(lo) + " is larger than " + hi + ": the minimum cannot be met",
             setting(*a) + "; " + setting(*b), "make the minimum no larger than the maximum");
  }
  const EnvEntry* th = c.get("NCCL_SOCKET_NTHREADS");
  const EnvEntry* ns = c.get("NCCL_NSOCKS_PERTHREAD");
  if (th && ns) {
    auto x = nccl_int(th->value), y = nccl_int(ns->value);
    if (x && y && *x * *y > 64)
      contra(Severity::Warn, "NCCL_NSOCKS_PERTHREAD",
             "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD = " + std::to_string(*x * *y) +
                 " exceeds NCCL's limit of 64 sockets per connection; NCCL lowers the socket count",
             setting(*th) + "; " + setting(*ns), "keep the product at 64 or below (e.g. 4 x 4)");
  }
  const EnvEntry* old_gdr = c.get("NCCL_IB_GDR_LEVEL");
  const EnvEntry* new_gdr = c.get("NCCL_NET_GDR_LEVEL");
  if (old_gdr && new_gdr && core::upper(old_gdr->value) != core::upper(new_gdr->value))
    contra(Severity::Warn, "NCCL_NET_GDR_LEVEL",
           "NCCL_IB_GDR_LEVEL (the old name) and NCCL_NET_GDR_LEVEL disagree; NCCL reads the new name",
           setting(*old_gdr) + "; " + setting(*new_gdr), "remove NCCL_IB_GDR_LEVEL");
}

}  // namespace

const std::vector<FindingInfo>& lint_rules() {
  static const std::vector<FindingInfo> rules = finding_table("docs/ncclenv.md", {
      {"env.syntax", "env", Severity::Warn, "a line of an env-file or nccl.conf that its reader would misread"},
      {"env.duplicate", "env", Severity::Warn, "a variable set more than once; which setting wins"},
      {"env.unknown_variable", "env", Severity::Warn, "an NCCL_* name NCCL does not read (typo: closest known name)"},
      {"env.bad_value", "env", Severity::Warn, "a value of the wrong type or out of range"},
      {"env.debug_variable", "env", Severity::Warn, "NCCL_DEBUG=INFO/TRACE or a debug-only variable left set"},
      {"env.hca_matches_nothing", "env", Severity::Fail, "NCCL_IB_HCA (or one of its entries) matches no RDMA port"},
      {"env.hca_port_down", "env", Severity::Fail, "NCCL_IB_HCA selects ports that are not ACTIVE/LinkUp"},
      {"env.ifname_matches_nothing", "env", Severity::Fail, "NCCL_SOCKET_IFNAME matches no interface that is up"},
      {"env.ifname_loopback", "env", Severity::Warn, "NCCL_SOCKET_IFNAME selects only lo: no other node is reachable"},
      {"env.gid_index_invalid", "env", Severity::Fail, "NCCL_IB_GID_INDEX names an empty, RoCE v1 or non-IPv4 GID"},
      {"env.ib_disabled_with_rdma", "env", Severity::Warn, "NCCL_IB_DISABLE=1 while RDMA ports are active"},
      {"env.p2p_or_shm_disabled", "env", Severity::Warn, "GPU peer-to-peer or shared memory turned off"},
      {"env.contradiction", "env", Severity::Fail, "settings that contradict each other"},
  });
  return rules;
}

NameFilter parse_name_filter(const std::string& value, bool with_ports) {
  NameFilter f;
  std::string_view v = value;
  if (!v.empty() && v.front() == '^') f.exclude = true, v.remove_prefix(1);
  if (!v.empty() && v.front() == '=') f.exact = true, v.remove_prefix(1);
  for (const auto& part : core::split(v, ',')) {
    NameFilter::Item item;
    item.name = std::string(core::trim(part));
    if (with_ports) {
      if (auto colon = item.name.rfind(':'); colon != std::string::npos) {
        auto port = core::parse_int(item.name.substr(colon + 1));
        item.port = port && *port >= 0 && *port < 256 ? static_cast<int>(*port) : -2;  // -2: unparsable, matches nothing
        item.name.resize(colon);
      }
    }
    if (!item.name.empty()) f.items.push_back(std::move(item));
  }
  return f;
}

bool filter_item_matches(const NameFilter& f, const NameFilter::Item& item, const std::string& name, int port) {
  const bool name_ok = f.exact ? name == item.name : core::starts_with(name, item.name);
  return name_ok && (item.port == -1 || port == -1 || item.port == port);
}

bool filter_selects(const NameFilter& f, const std::string& name, int port) {
  bool any = false;
  for (const auto& item : f.items) any = any || filter_item_matches(f, item, name, port);
  return f.exclude ? !any : any;
}

std::vector<Finding> lint(const NodeInfo& node, const std::vector<EnvEntry>& entries, const std::vector<VarInfo>& vars) {
  Ctx c{node, vars, {}, {}};
  std::vector<const EnvEntry*> effective;
  for (const auto& e : entries) {
    if (!core::starts_with(e.key, "NCCL_")) continue;
    auto [it, inserted] = c.eff.emplace(e.key, &e);
    if (inserted) {
      effective.push_back(&e);
      continue;
    }
    const EnvEntry& used = *it->second;
    const bool same_source = used.source == e.source;
    if (!same_source && used.value == e.value) continue;  // the same value layered twice: harmless
    c.out.push_back(make_finding(
        "env.duplicate", same_source ? Severity::Warn : Severity::Info, e.key,
        same_source
            ? e.key + " is set more than once in " + e.source + "; " + used.where() + " is the one used"
            : e.key + " is set in " + used.where() + " and in " + e.where() + "; " + used.where() +
                  " wins (" + used.source +
                  (used.line == 0 ? " overrides configuration files)" : " is read first)"),
        setting(used) + " used; " + setting(e) + " ignored",
        same_source ? "keep one line for " + e.key : "remove the setting that does not apply", kDocs));
  }
  for (const auto* e : effective) {
    rule_unknown(c, *e);
    rule_value(c, *e);
    rule_debug(c, *e);
  }
  rule_hca(c);
  rule_ifname(c);
  rule_gid(c);
  rule_ib_disabled(c);
  rule_p2p_shm(c);
  rule_contradiction(c);
  std::stable_sort(c.out.begin(), c.out.end(),
                   [](const Finding& a, const Finding& b) { return a.severity > b.severity; });
  return c.out;
}

}  // namespace fabscope::ncclenv
