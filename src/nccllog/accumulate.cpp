#include "nccllog/accumulate.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <deque>
#include <map>
#include <unordered_map>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "nccllog/rules.hpp"
#include "nccllog/signatures.hpp"

namespace fabscope::nccllog {

namespace {

using sv = std::string_view;

struct RankState {
  RankInfo info;
  std::size_t proc = 0;
  std::uint64_t ptr = 0;
  std::string comm_id;
  bool nvls = false;
  Phase phase = Phase::Unknown;
  std::vector<std::pair<int, long>> transports;  // (transport id, connections); few: linear search
  std::map<std::tuple<int, int, int>, long> pairs;       // (from, to, transport index)
  // The pair of the last Channel line: a pointer into a node of `pairs`, which stays put when
  // the map grows and when the RankState is moved (hence no copies of a RankState).
  std::tuple<int, int, int> last_pair{-1, -1, -1};
  long* last_pair_count = nullptr;
  long pairs_dropped = 0;

  RankState() = default;
  RankState(RankState&&) = default;
  RankState& operator=(RankState&&) = default;
  RankState(const RankState&) = delete;
  RankState& operator=(const RankState&) = delete;
};

// The rank a framework line names: a launcher's "[rank13]:" prefix (the global rank) first, else
// PyTorch's "[Rank 3]" (the rank in its process group); -1 when neither.
int framework_rank(sv raw) {
  for (sv key : {sv("[rank"), sv("[Rank ")}) {
    std::size_t p = raw.find(key);
    if (p == sv::npos) continue;
    std::size_t i = p + key.size();
    int v = 0, digits = 0;
    while (i < raw.size() && raw[i] >= '0' && raw[i] <= '9' && digits < 9) v = v * 10 + (raw[i++] - '0'), ++digits;
    if (digits > 0 && i < raw.size() && raw[i] == ']') return v;
  }
  return -1;
}

std::vector<Nic> parse_nics(sv list, bool with_link_layer) {
  // " [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]" or " [0]eth0:10.0.0.1<0> [1]ib0:..."
  std::vector<Nic> out;
  if (!with_link_layer && list.find('[') == sv::npos) {  // "ib0:12.12.12.102<0>" (NCCL 2.3-2.4: no index)
    sv tok = core::trim(list);
    tok = tok.substr(0, tok.find(' '));
    if (!tok.empty()) out.push_back(Nic{std::string(tok), ""});
    return out;
  }
  while (!list.empty() && out.size() < 64) {
    std::size_t open = list.find('[');
    if (open == sv::npos) break;
    std::size_t close = list.find(']', open);
    if (close == sv::npos) break;
    sv idx = list.substr(open + 1, close - open - 1);
    list.remove_prefix(close + 1);
    if (idx.empty() || !std::all_of(idx.begin(), idx.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;  // "[RO]" (relaxed ordering) is a flag, not a device
    sv tok = list.substr(0, list.find(' '));
    Nic n;
    std::size_t slash = with_link_layer ? tok.rfind('/') : sv::npos;
    n.name = std::string(tok.substr(0, slash));
    if (slash != sv::npos) n.link_layer = std::string(tok.substr(slash + 1));
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace

int net_device_index(std::string_view via, bool& socket) {
  socket = false;
  if (via.substr(0, 4) != "NET/") return -1;
  sv rest = via.substr(4);
  socket = rest.substr(0, 6) == "Socket";
  std::size_t slash = rest.find('/');
  if (slash == sv::npos) return -1;
  int v = 0, digits = 0;
  for (std::size_t i = slash + 1; i < rest.size() && rest[i] >= '0' && rest[i] <= '9' && digits < 4; ++i, ++digits)
    v = v * 10 + (rest[i] - '0');
  return digits ? v : -1;
}

std::string normalize_transport(std::string_view via) {
  via = via.substr(0, 128);
  if (via.substr(0, 4) == "NET/") {
    sv rest = via.substr(4);
    std::string out = "NET/" + std::string(rest.substr(0, rest.find('/')));
    if (rest.find("/GDRDMA") != sv::npos) out += "/GDRDMA";
    return out;
  }
  if (via.substr(0, 13) == "P2P/indirect/") {
    std::string out = "P2P/indirect";
    if (via.size() >= 5 && via.substr(via.size() - 5) == "/read") out += "/read";
    return out;
  }
  return std::string(via);
}

struct Accumulator::State {
  LogSummary sum;
  InputInfo input;
  std::uint64_t line_no = 0;
  PrefixMemo prefix_memo;
  // host:pid -> index into sum.processes, looked up without building a string: logs of several
  // ranks interleave their lines, so the "last process" cache below misses on most lines.
  struct ProcKey {
    sv host;  // points into proc_hosts
    long pid;
    bool operator==(const ProcKey& o) const { return pid == o.pid && host == o.host; }
  };
  struct ProcHash {
    std::size_t operator()(const ProcKey& k) const {
      return std::hash<sv>{}(k.host) ^ (static_cast<std::size_t>(k.pid) * 0x9E3779B97F4A7C15ull);
    }
  };
  std::unordered_map<ProcKey, std::size_t, ProcHash> proc_index;
  std::deque<std::string> proc_hosts;  // the bytes ProcKey::host points at (a deque never moves them)
  std::string last_host;
  long last_pid = -2;
  std::size_t last_proc = 0;
  std::vector<RankState> ranks;
  std::map<std::pair<std::size_t, std::uint64_t>, std::size_t> rank_by_ptr;
  std::map<std::pair<std::size_t, int>, std::size_t> current_rank;  // (proc, cudaDev) -> rank
  std::map<std::size_t, std::size_t> unattributed;                   // proc -> pseudo rank
  std::vector<SignatureHit> hits;  // indexed like signatures()
  std::vector<std::string> transport_names;
  std::unordered_map<std::string, int> transport_index;

  State() { hits.resize(signatures().size()); }

  // The process of a line, or SIZE_MAX when the line has no prefix or the cap is reached.
  std::size_t process(const Line& l) {
    if (l.host.empty()) return SIZE_MAX;
    if (l.pid == last_pid && l.host == last_host) return last_proc;
    auto it = proc_index.find(ProcKey{l.host, l.pid});
    std::size_t idx;
    if (it != proc_index.end()) {
      idx = it->second;
    } else {
      if (sum.processes.size() >= kMaxProcesses) {
        ++sum.dropped_entities;
        return SIZE_MAX;
      }
      idx = sum.processes.size();
      ProcessInfo p;
      p.host = std::string(l.host);
      p.pid = l.pid;
      sum.processes.push_back(std::move(p));
      proc_hosts.emplace_back(l.host);
      proc_index.emplace(ProcKey{proc_hosts.back(), l.pid}, idx);
    }
    last_host.assign(l.host);
    last_pid = l.pid;
    last_proc = idx;
    return idx;
  }

  std::size_t rank_for_ptr(std::size_t proc, std::uint64_t ptr, const Line& l) {
    auto key = std::make_pair(proc, ptr);
    auto it = rank_by_ptr.find(key);
    if (it != rank_by_ptr.end()) return it->second;
    if (ranks.size() >= kMaxRanks) {
      ++sum.dropped_entities;
      return SIZE_MAX;
    }
    RankState r;
    r.proc = proc;
    r.ptr = ptr;
    r.info.host = sum.processes[proc].host;
    r.info.pid = sum.processes[proc].pid;
    r.info.cuda_dev = l.cuda_dev;
    ranks.push_back(std::move(r));
    rank_by_ptr.emplace(key, ranks.size() - 1);
    return ranks.size() - 1;
  }

  // The last (process, device) -> rank of a Channel line: channel lines come in runs from one
  // thread, so the map lookup is skipped for most of them. Reset whenever current_rank changes.
  std::size_t chan_proc = SIZE_MAX, chan_rank = SIZE_MAX;
  int chan_dev = -2;

  std::size_t rank_for_channel(std::size_t proc, int dev) {
    if (proc == chan_proc && dev == chan_dev) return chan_rank;
    std::size_t r = rank_for_channel_slow(proc, dev);
    if (r != SIZE_MAX) {
      chan_proc = proc;
      chan_dev = dev;
      chan_rank = r;
    }
    return r;
  }

  std::size_t rank_for_channel_slow(std::size_t proc, int dev) {
    auto it = current_rank.find({proc, dev});
    if (it != current_rank.end()) return it->second;
    auto u = unattributed.find(proc);
    if (u != unattributed.end()) return u->second;
    if (ranks.size() >= kMaxRanks) {
      ++sum.dropped_entities;
      return SIZE_MAX;
    }
    RankState r;
    r.proc = proc;
    r.info.host = sum.processes[proc].host;
    r.info.pid = sum.processes[proc].pid;
    r.info.cuda_dev = dev;
    ranks.push_back(std::move(r));
    unattributed.emplace(proc, ranks.size() - 1);
    return ranks.size() - 1;
  }

  std::string last_via;
  int last_via_id = -1;
  int last_via_dev = -1;
  bool last_via_socket = false;

  int transport_id(sv via) {
    // Consecutive Channel lines almost always name the same transport: skip normalising.
    if (last_via_id >= 0 && via == last_via) return last_via_id;
    int id = transport_id_slow(via);
    last_via.assign(via.substr(0, 128));
    last_via_id = via.size() <= 128 ? id : -1;
    last_via_dev = net_device_index(via, last_via_socket);
    return id;
  }

  void count_net_device(ProcessInfo& p) {
    if (last_via_dev < 0 || last_via_dev >= 64) return;
    auto& v = last_via_socket ? p.socket_dev_channels : p.ib_dev_channels;
    const auto i = static_cast<std::size_t>(last_via_dev);
    if (v.size() <= i) v.resize(i + 1, 0);
    ++v[i];
  }

  std::uint64_t seq = 0;

  // The rank (and its phase) a line of this process/device belongs to, or SIZE_MAX.
  std::size_t rank_of_line(std::size_t proc, int dev) const {
    auto it = current_rank.find({proc, dev});
    if (it != current_rank.end()) return it->second;
    // Any device of the process: the first key (proc, *) in the map's order.
    auto any = current_rank.lower_bound({proc, std::numeric_limits<int>::min()});
    return any != current_rank.end() && any->first.first == proc ? any->second : SIZE_MAX;
  }

  void record_failure(const Line& l, const Event& e) {
    if (l.level == Level::Info) return;  // notes and fallbacks, not failures
    Severity sev = e.signature ? e.signature->severity : Severity::Warn;
    if (sev < Severity::Warn) return;
    if (sum.failures.size() >= kMaxFailures) {
      ++sum.failures_dropped;
      return;
    }
    Failure f;
    f.id = e.signature ? e.signature->id : "unknown_warning";
    f.severity = sev;
    f.line = std::string(l.raw.substr(0, 300));
    f.input = input.name + ":" + std::to_string(line_no);
    f.seq = seq++;
    f.host = std::string(l.host.substr(0, 128));
    f.pid = l.pid;
    f.cuda_dev = l.cuda_dev;
    f.source = std::string(l.source.substr(0, 64));
    f.time = line_time(l);
    std::size_t proc = l.host.empty() ? SIZE_MAX : process(l);
    if (proc != SIZE_MAX) {
      f.phase = sum.processes[proc].phase;
      std::size_t r = rank_of_line(proc, l.cuda_dev);
      if (r != SIZE_MAX) {
        f.rank = ranks[r].info.rank;
        if (ranks[r].phase != Phase::Unknown) f.phase = ranks[r].phase;
      }
    }
    // What the line itself proves: a QP, a memory registration or a completion belongs to a
    // connection (logs quoted without their INFO lines still place it); bootstrap.cc is bootstrap.
    if (auto hint = phase_hint(f.id, f.source); hint && f.phase < *hint) f.phase = *hint;
    if (f.source.rfind("bootstrap.cc", 0) == 0) f.phase = Phase::Bootstrap;
    // NCCL names the subsystem first: "Bootstrap : no socket interface found".
    if (f.phase == Phase::Unknown && l.level == Level::Warn && l.message.starts_with("Bootstrap")) f.phase = Phase::Bootstrap;
    // A framework line has no host:pid; its launcher prefix or its text may name the rank.
    if (l.level == Level::Framework && f.rank < 0) f.rank = framework_rank(l.raw);
    // Failures of one process printed back to back share the traces that follow them.
    const bool run = open_failure < sum.failures.size() && open_traces == 0 &&
                     sum.failures[open_failure].pid == f.pid && sum.failures[open_failure].host == f.host;
    if (!run) open_failure = sum.failures.size();
    open_traces = 0;
    sum.failures.push_back(std::move(f));
  }

  // The first "file:line -> N" traces after a failure on the same thread say where it happened:
  // transport code is a connection, bootstrap.cc the rendezvous (logs quoted without INFO lines).
  std::size_t open_failure = SIZE_MAX;
  int open_traces = 0;
  // A WARN the catalog does not know is a failure, not a note, when NCCL returns an error
  // (code != 0) right after it: the trace is NCCL's own word that the call failed.
  void place_failure(const Line& l, long code) {
    // The first four traces may raise a phase; later ones (up to 16) only place a failure whose
    // phase nothing showed yet (socket.cc traces can run deep before bootstrap.cc).
    if (open_failure >= sum.failures.size() || open_traces >= 16) return;
    if (sum.failures[open_failure].pid != l.pid || sum.failures[open_failure].host != l.host) return;
    const bool deep = ++open_traces > 4;
    sv file = l.message.substr(0, l.message.find(':'));
    std::optional<Phase> hint = phase_hint("", file);
    for (std::size_t i = open_failure; i < sum.failures.size(); ++i) {
      Failure& f = sum.failures[i];
      if (code != 0 && f.id == "unknown_warning") f.severity = Severity::Fail;
      if (deep && f.phase != Phase::Unknown) continue;
      if (file.substr(0, 9) == "transport" && f.phase < Phase::Connect) {
        f.phase = Phase::Connect;
      } else if (file.substr(0, 9) == "bootstrap" && f.phase < Phase::Connect) {
        f.phase = Phase::Bootstrap;
      } else if (f.phase == Phase::Unknown && hint) {
        f.phase = *hint;  // the deepest trace whose file names a phase ("init.cc", "proxy.cc")
      }
    }
  }

  // NCCL's last error, quoted by the framework on the line after "Last error:" (PyTorch's
  // ncclInternalError/ncclSystemError message): the WARN text that made the call fail, often the
  // only one in a log run without NCCL_DEBUG. A WARN of the catalog or not, it is a failure.
  // Some frameworks leave "Last error:" out and print the text right after the result's name
  // ("ncclUnhandledCudaError: Call to CUDA function failed." then "Failed to bind NVLink SHARP
  // ..."): that next line is taken only when the catalog knows it (it may as well be a stack
  // frame or the user's own output).
  bool last_error_pending = false;
  bool last_error_known_only = false;
  std::string last_error_prefix;  // the launcher prefix of the "Last error:" line ("[trainer0|0]:")

  void last_error_text(sv raw) {
    last_error_pending = false;
    sv text = raw;
    if (!last_error_prefix.empty() && text.starts_with(last_error_prefix)) text.remove_prefix(last_error_prefix.size());
    text = core::trim(text);
    if (text.empty()) return;
    Line l;  // the text as a WARN of no process
    l.raw = text;
    l.level = Level::Warn;
    l.message = text;
    l.prefix_read = true;
    Event e = classify(l);
    if (last_error_known_only && e.kind != EventKind::SignatureHit) return;
    const std::size_t before = sum.failures.size();
    apply(l, e);
    if (sum.failures.size() > before) sum.failures.back().severity = Severity::Fail;
  }

  // Where a line that is no NCCL line announces NCCL's stored error text on the next one:
  // "...Last error:" (the text follows whatever it is), or "ncclSystemError: <description>"
  // (the text follows when the catalog knows it, see above).
  void expect_last_error(sv raw) {
    sv t = raw;
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
    if (t.ends_with("Last error:")) {
      last_error_pending = true;
      last_error_known_only = false;
      last_error_prefix.assign(t.substr(0, std::min<std::size_t>(t.size() - 11, 128)));
      return;
    }
    // "[rank0]: ncclUnhandledCudaError: Call to CUDA function failed."
    std::size_t at = t.substr(0, 132).find("nccl");  // within 128 bytes: this runs on every non-NCCL line
    if (at == sv::npos || (at > 0 && t[at - 1] != ' ' && t[at - 1] != ':')) return;
    std::size_t i = at + 4;
    if (i >= t.size() || t[i] < 'A' || t[i] > 'Z') return;
    while (i < t.size() && ((t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= 'a' && t[i] <= 'z'))) ++i;
    if (t.substr(at, i - at).ends_with("Error") && t.substr(i).starts_with(": ")) {
      last_error_pending = true;
      last_error_known_only = true;
      last_error_prefix.assign(core::trim(t.substr(0, at)));
    }
  }

  void set_phase(ProcessInfo& p, RankState* r, Phase ph) {
    if (p.phase < ph) p.phase = ph;
    if (r && r->phase < ph) r->phase = ph;
  }

  int transport_id_slow(sv via) {
    std::string name = normalize_transport(via);
    auto it = transport_index.find(name);
    if (it != transport_index.end()) return it->second;
    if (transport_names.size() >= 256) return -1;
    int id = static_cast<int>(transport_names.size());
    transport_names.push_back(name);
    transport_index.emplace(std::move(name), id);
    return id;
  }

  void add_version(sv v) {
    if (v.empty()) return;
    for (const auto& x : sum.versions)
      if (x == v) return;
    if (sum.versions.size() < 64) sum.versions.emplace_back(v);
  }

  void hit(const Event& e, const Line& l) {
    std::size_t i = static_cast<std::size_t>(e.signature - signatures().data());
    if (i >= hits.size()) return;
    SignatureHit& h = hits[i];
    if (h.count++ == 0) {
      h.id = e.signature->id;
      h.severity = e.signature->severity;
      h.first_line = std::string(l.raw.substr(0, 300));
      h.first_input = input.name + ":" + std::to_string(line_no);
      if (e.signature->wc_status >= 0 || std::string_view(e.signature->id) == "ib_completion_error")
        h.wc_status = completion_status(l.message);
    }
    if (!l.host.empty() && h.hosts.size() < 16 &&
        std::find(h.hosts.begin(), h.hosts.end(), l.host) == h.hosts.end())
      h.hosts.emplace_back(l.host);
  }

  // Events about ranks and communicators need a process; the rest are facts of whoever printed them.
  static bool is_rank_event(EventKind k) {
    switch (k) {
      case EventKind::ErrorTrace:
      case EventKind::CommInfo:
      case EventKind::InitStart:
      case EventKind::InitComplete:
      case EventKind::InitTimings:
      case EventKind::Channel:
      case EventKind::Nvls:
        return true;
      default:
        return false;
    }
  }

  static void add_decision(ProcessInfo& p, sv feature, bool on, std::string scope, sv reason) {
    for (auto& d : p.decisions)
      if (d.feature == feature && d.enabled == on && d.scope == scope && d.reason == reason) {
        ++d.count;
        return;
      }
    if (p.decisions.size() >= kMaxDecisions) return;
    Decision d;
    d.feature = std::string(feature.substr(0, 32));
    d.enabled = on;
    d.scope = std::move(scope);
    d.reason = std::string(reason.substr(0, 160));
    d.count = 1;
    p.decisions.push_back(std::move(d));
  }

  // NCCL_* switches that turn a feature off (or force it on) when the environment sets them.
  static void env_decision(ProcessInfo& p, sv name, sv value) {
    struct Switch {
      const char* name;
      const char* feature;
      const char* off_value;  // the value that turns it off
      const char* on_value;   // the value that forces it on ("" = none)
    };
    static const Switch kSwitches[] = {
        {"NCCL_P2P_DISABLE", "P2P", "1", ""},      {"NCCL_SHM_DISABLE", "SHM", "1", ""},
        {"NCCL_IB_DISABLE", "NET/IB", "1", ""},    {"NCCL_NVLS_ENABLE", "NVLS", "0", "1"},
        {"NCCL_COLLNET_ENABLE", "CollNet", "0", "1"}, {"NCCL_NET_GDR_LEVEL", "GDR", "LOC", ""},
    };
    for (const auto& sw : kSwitches) {
      if (name != sw.name) continue;
      const bool off = value == sw.off_value || (sv(sw.name) == "NCCL_NET_GDR_LEVEL" && value == "0");
      const bool on = sw.on_value[0] != '\0' && value == sw.on_value;
      if (off || on) add_decision(p, sw.feature, on, "", std::string(name) + "=" + std::string(value) + " set by environment");
    }
  }

  void apply_fact(ProcessInfo& p, const Line& l, const Event& e) {
    switch (e.kind) {
      case EventKind::CudaDriver:
        if (!p.cuda_driver) p.cuda_driver = e.number;
        break;
      case EventKind::Bootstrap:
        if (!p.bootstrap_if) p.bootstrap_if = std::string(e.name.substr(0, 128));
        break;
      case EventKind::NetIbUsing:
        if (p.ib_nics.empty()) p.ib_nics = parse_nics(e.name, true);
        break;
      case EventKind::NetSocketUsing:
        if (p.socket_ifs.empty()) p.socket_ifs = parse_nics(e.name, false);
        break;
      case EventKind::IbNoDevice:
        p.ib_no_device = true;
        break;
      case EventKind::NetPluginFailed: {
        std::string n(e.name.substr(0, 64));
        if (std::find(p.failed_plugins.begin(), p.failed_plugins.end(), n) == p.failed_plugins.end() &&
            p.failed_plugins.size() < 8)
          p.failed_plugins.push_back(std::move(n));
        break;
      }
      case EventKind::UsingNetwork:
        p.network = std::string(e.name.substr(0, 64));
        break;
      case EventKind::EnvOverride:
        if (p.env.size() < 256) p.env[std::string(e.name.substr(0, 64))] = std::string(e.value.substr(0, 256));
        env_decision(p, e.name, e.value);
        break;
      case EventKind::Decision: {
        // "NET/IB : GPU Direct RDMA ..." names its plugin first: part of where.
        std::string scope(e.value.substr(0, 96));
        sv first = l.message.substr(0, l.message.find(' '));
        if (first.starts_with("NET/") && e.value.data() != first.data())
          scope = scope.empty() ? std::string(first) : std::string(first) + " " + scope;
        add_decision(p, e.name, e.number != 0, std::move(scope), e.detail);
        break;
      }
      default:
        break;
    }
  }

  void apply(const Line& l, const Event& e) {
    std::size_t proc = SIZE_MAX;
    switch (e.kind) {
      case EventKind::None:
        return;
      case EventKind::Version:
        add_version(e.name);
        if ((proc = process(l)) != SIZE_MAX && !sum.processes[proc].nccl_version)
          sum.processes[proc].nccl_version = std::string(e.name);
        return;
      case EventKind::SignatureHit:
        hit(e, l);
        record_failure(l, e);
        if (l.level == Level::Warn && (proc = process(l)) != SIZE_MAX) ++sum.processes[proc].warnings;
        return;
      case EventKind::UnknownWarn: {
        ++sum.unknown_warnings;
        std::string msg(e.name.substr(0, 200));
        if (sum.unknown_samples.size() < 10 &&
            std::find(sum.unknown_samples.begin(), sum.unknown_samples.end(), msg) == sum.unknown_samples.end())
          sum.unknown_samples.push_back(std::move(msg));
        record_failure(l, e);
        if ((proc = process(l)) != SIZE_MAX) ++sum.processes[proc].warnings;
        return;
      }
      default:
        break;
    }
    proc = process(l);
    if (proc == SIZE_MAX) {
      // A line without "host:pid:tid": what it says of settings and networks still counts.
      if (l.host.empty() && !is_rank_event(e.kind)) {
        if (!sum.unprefixed) sum.unprefixed.emplace();
        apply_fact(*sum.unprefixed, l, e);
      }
      return;
    }
    ProcessInfo& p = sum.processes[proc];
    // An INFO line of the process: its init has started, so it is at least in bootstrap.
    if (p.phase == Phase::Unknown && l.level == Level::Info) p.phase = Phase::Bootstrap;
    if (!is_rank_event(e.kind)) {
      apply_fact(p, l, e);
      return;
    }
    switch (e.kind) {
      case EventKind::ErrorTrace:
        place_failure(l, e.number);
        if (!p.first_error_code && e.number != 0) {
          p.first_error_code = e.number;
          p.first_error_trace = std::string(l.message.substr(0, std::min<std::size_t>(l.message.find(' '), 64)));
        }
        break;
      case EventKind::CommInfo:
      case EventKind::InitStart:
      case EventKind::InitComplete: {
        std::size_t r = rank_for_ptr(proc, e.comm_ptr, l);
        if (r == SIZE_MAX) break;
        RankState& rs = ranks[r];
        if (e.rank >= 0) rs.info.rank = e.rank;
        if (e.nranks > 0) rs.info.nranks = e.nranks;
        if (!e.comm_id.empty()) rs.comm_id = std::string(e.comm_id.substr(0, 40));
        if (l.cuda_dev >= 0 && rs.info.cuda_dev < 0) rs.info.cuda_dev = l.cuda_dev;
        if (e.kind == EventKind::CommInfo) {
          if (e.nnodes >= 0) rs.info.nnodes = e.nnodes;
          if (e.local_ranks >= 0) rs.info.local_ranks = e.local_ranks;
          if (e.local_rank >= 0) rs.info.local_rank = e.local_rank;
          // Channel lines that follow carry no comm pointer: NCCL prints them from the thread
          // that set this comm up, so they belong to the last comm of this (process, device).
          current_rank[{proc, l.cuda_dev}] = r;
          chan_proc = SIZE_MAX;
          set_phase(p, &rs, Phase::Topology);
        } else if (e.kind == EventKind::InitStart) {
          rs.info.init_started = true;
          current_rank[{proc, l.cuda_dev}] = r;
          chan_proc = SIZE_MAX;
          if (rs.phase == Phase::Unknown) rs.phase = Phase::Bootstrap;
          p.phase = rs.phase;  // a new communicator starts its own bootstrap
        } else {
          rs.info.init_complete = true;
          set_phase(p, &rs, Phase::Running);
        }
        break;
      }
      case EventKind::InitTimings: {
        auto it = current_rank.find({proc, l.cuda_dev});
        std::size_t r = it != current_rank.end() ? it->second : SIZE_MAX;
        if (r == SIZE_MAX || (ranks[r].info.rank >= 0 && ranks[r].info.rank != e.rank)) {
          for (std::size_t k = 0; k < ranks.size() && r == SIZE_MAX; ++k)
            if (ranks[k].proc == proc && ranks[k].info.rank == e.rank && ranks[k].ptr != 0) r = k;
        }
        if (r != SIZE_MAX) ranks[r].info.init_total_s = e.seconds;
        break;
      }
      case EventKind::Channel: {
        ++sum.channel_lines;
        std::size_t r = rank_for_channel(proc, l.cuda_dev);
        if (r == SIZE_MAX) break;
        int t = transport_id(e.name);
        if (t < 0) break;
        RankState& rs = ranks[r];
        count_net_device(p);
        if (rs.phase < Phase::Connect) set_phase(p, &rs, Phase::Connect);
        auto tc = std::find_if(rs.transports.begin(), rs.transports.end(),
                               [&](const auto& x) { return x.first == t; });
        if (tc == rs.transports.end()) {
          rs.transports.emplace_back(t, 1);
        } else {
          ++tc->second;
        }
        auto key = std::make_tuple(e.from, e.to, t);
        // The channels of one connection come one after another: the last pair is usually it.
        if (rs.last_pair_count != nullptr && rs.last_pair == key) {
          ++*rs.last_pair_count;
          break;
        }
        auto pit = rs.pairs.find(key);
        if (pit == rs.pairs.end() && rs.pairs.size() < kMaxPairsPerRank) pit = rs.pairs.emplace(key, 0).first;
        if (pit != rs.pairs.end()) {
          ++pit->second;
          rs.last_pair = key;
          rs.last_pair_count = &pit->second;
        } else {
          ++rs.pairs_dropped;
        }
        break;
      }
      case EventKind::Nvls: {
        auto it = current_rank.find({proc, l.cuda_dev});
        if (it != current_rank.end()) ranks[it->second].nvls = true;
        break;
      }
      default:
        break;
    }
  }
};

Accumulator::Accumulator() : s_(std::make_unique<State>()) {}
Accumulator::~Accumulator() = default;

void Accumulator::begin_input(const std::string& name) {
  s_->input = InputInfo{};
  s_->input.name = name;
  s_->line_no = 0;
  s_->last_error_pending = false;
  // A new file is a new stream: process/comm identities carry over (per-rank files of one
  // job), but the "last process" cache must not.
  s_->last_pid = -2;
  s_->last_via_id = -1;
}

void Accumulator::add_line(std::string_view raw) {
  ++s_->line_no;
  Line l;
  bool scanned = false;
  if (s_->last_error_pending) {
    if (!s_->last_error_known_only) {
      s_->last_error_text(raw);
      return;
    }
    // After "ncclSystemError: ...": a "Last error:" line may still come, or an NCCL line.
    s_->last_error_pending = false;
    if (!scan_line(raw, l)) {
      s_->expect_last_error(raw);
      if (!s_->last_error_pending) {
        s_->last_error_pending = true;  // known_only is still set: catalog texts only
        s_->last_error_text(raw);
      }
      return;
    }
    scanned = true;
  }
  if (!scanned && !scan_line(raw, l)) {
    s_->expect_last_error(raw);
    return;
  }
  ++s_->input.nccl_lines;
  Event e = classify(l);  // reads only the level and the message
  if (e.kind == EventKind::None) return;
  s_->prefix_memo.read(l);
  s_->apply(l, e);
}

void Accumulator::end_input(const LineReader& reader) {
  s_->input.bytes = reader.bytes();
  s_->input.lines = reader.lines();
  s_->input.cut_lines = reader.cut_lines();
  s_->sum.inputs.push_back(s_->input);
}

LogSummary Accumulator::finish() {
  LogSummary out = std::move(s_->sum);
  for (auto& h : s_->hits)
    if (h.count > 0) out.hits.push_back(std::move(h));

  std::map<std::string, std::size_t> comm_index;
  for (const RankState& r : s_->ranks) {
    std::string key = !r.comm_id.empty() ? r.comm_id
                      : r.info.nranks > 0 ? "nranks=" + std::to_string(r.info.nranks)
                                          : "unknown";
    auto it = comm_index.find(key);
    if (it == comm_index.end()) {
      it = comm_index.emplace(key, out.comms.size()).first;
      CommSummary c;
      c.key = key;
      out.comms.push_back(std::move(c));
    }
    CommSummary& c = out.comms[it->second];
    if (r.info.nranks > 0) c.nranks = r.info.nranks;
    if (r.info.nnodes) c.nnodes = std::max(c.nnodes.value_or(0), *r.info.nnodes);
    c.nvls = c.nvls || r.nvls;
    if (r.ptr != 0) c.ranks.push_back(r.info);
    for (const auto& tr : r.transports) {
      // no structured binding: clang 14 cannot capture one
      const std::string& name = s_->transport_names[static_cast<std::size_t>(tr.first)];
      const long count = tr.second;
      auto tc = std::find_if(c.transports.begin(), c.transports.end(),
                             [&](const TransportCount& t) { return t.transport == name; });
      if (tc == c.transports.end()) {
        TransportCount t;
        t.transport = name;
        t.network = name.rfind("NET/", 0) == 0;
        t.gdrdma = name.find("/GDRDMA") != std::string::npos;
        c.transports.push_back(t);
        tc = c.transports.end() - 1;
      }
      tc->connections += count;
      if (tc->network) {
        c.net_connections += count;
        bool socket = name.rfind("NET/Socket", 0) == 0;
        if (socket) c.net_socket_connections += count;
        else c.net_rdma_connections += count;
        if (tc->gdrdma) c.net_gdr_connections += count;
      } else {
        c.local_connections += count;
      }
    }
    for (const auto& pr : r.pairs) {
      const int from = std::get<0>(pr.first), to = std::get<1>(pr.first), t = std::get<2>(pr.first);
      const long count = pr.second;
      const std::string& name = s_->transport_names[static_cast<std::size_t>(t)];
      auto pp = std::find_if(c.pairs.begin(), c.pairs.end(), [&](const PeerPair& p) {
        return p.from == from && p.to == to && p.transport == name;
      });
      if (pp != c.pairs.end()) {
        pp->channels += count;
      } else if (c.pairs.size() < kMaxPairsPerRank * 4) {
        c.pairs.push_back(PeerPair{from, to, name, count});
      } else {
        ++c.pairs_dropped;
      }
    }
    c.pairs_dropped += r.pairs_dropped;
  }
  for (auto& c : out.comms) {
    std::sort(c.ranks.begin(), c.ranks.end(), [](const RankInfo& a, const RankInfo& b) {
      return std::tie(a.rank, a.host, a.pid) < std::tie(b.rank, b.host, b.pid);
    });
    std::sort(c.pairs.begin(), c.pairs.end(), [](const PeerPair& a, const PeerPair& b) {
      return std::tie(a.from, a.to, a.transport) < std::tie(b.from, b.to, b.transport);
    });
    std::sort(c.transports.begin(), c.transports.end(), [](const TransportCount& a, const TransportCount& b) {
      return a.connections != b.connections ? a.connections > b.connections : a.transport < b.transport;
    });
  }
  s_ = std::make_unique<State>();
  return out;
}

void accumulate_stream(Accumulator& acc, std::FILE* f, const std::string& name, std::size_t max_line_bytes) {
  LineReader reader(max_line_bytes);
  acc.begin_input(name);
  reader.read(f, name, [&](std::string_view line) { acc.add_line(line); });
  acc.end_input(reader);
}

LogSummary summarize_files(const std::vector<std::string>& paths, std::size_t max_line_bytes) {
  Accumulator acc;
  for (const auto& path : paths) {
    if (path == "-") {
      accumulate_stream(acc, stdin, "<stdin>", max_line_bytes);
      continue;
    }
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw Error(path + ": cannot open: " + std::strerror(errno));
    try {
      accumulate_stream(acc, f, path, max_line_bytes);
    } catch (...) {
      std::fclose(f);
      throw;
    }
    std::fclose(f);
  }
  return acc.finish();
}

LogSummary summarize_text(std::string_view text, const std::string& name) {
  Accumulator acc;
  LineReader reader;
  acc.begin_input(name);
  auto cb = [&](std::string_view line) { acc.add_line(line); };
  reader.feed(text.data(), text.size(), cb);
  reader.finish(cb);
  acc.end_input(reader);
  return acc.finish();
}

}  // namespace fabscope::nccllog
