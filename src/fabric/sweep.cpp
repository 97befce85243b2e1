#include "fabric/sweep.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>

#include "fabric/discover.hpp"
#include "fabric/mad.hpp"
#include "fabric/routes.hpp"
#include "fabric/umad.hpp"

namespace fabscope::fabric {

#ifndef FABSCOPE_UMAD_HEADERS

Subnet sweep(const SweepOptions&) {
  throw AccessError(AccessError::Kind::NoLibrary,
                    "no InfiniBand management access: this fabscope was built without the rdma-core "
                    "management header (libibumad-dev)");
}
void read_counters(Subnet& s, const SweepOptions& opt) { (void)s, sweep(opt); }
std::vector<Hop> trace_route(const Subnet&, int, std::uint16_t, const SweepOptions& opt, int) {
  sweep(opt);
  return {};
}

#else

static_assert(MadEngine::kMaxInflight == kMaxMadsInFlight, "the command's limit is the engine's");
static_assert(MadEngine::kDefaultPerDestination == kMadsPerDestination, "one default");

namespace {

std::string now_iso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

void set_note(std::string& note, const std::string& text) {
  if (note.empty()) note = text;
  else if (note.find(text) == std::string::npos) note += "; " + text;
}

// ca:port from a Subnet's source, for read_counters/trace_route without opt.ca.
LocalPort port_for(const UmadLib& l, const Subnet& s, const SweepOptions& opt) {
  if (!opt.ca.empty() || s.source.empty()) return choose_port(l, opt.ca, opt.port);
  auto colon = s.source.rfind(':');
  std::string ca = s.source.substr(0, colon);
  int port = 0;
  if (colon != std::string::npos) port = std::atoi(s.source.c_str() + colon + 1);
  return choose_port(l, ca, port);
}

// The target of PerfMgt queries: a LID and the ports read through it.
struct PmaTarget {
  std::uint16_t lid = 0;
  int node = -1;
  std::vector<int> ports;  // port numbers
};

void collect_counters(Subnet& s, MadEngine& e, int max_inflight, int per_dest) {
  std::vector<PmaTarget> targets;
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n) {
    auto& node = s.nodes[n];
    for (auto& p : node.ports) p.counters.reset();
    if (node.type == NodeType::Switch) {
      std::uint16_t lid = node.lid();
      PmaTarget t{lid, n, {}};
      for (auto& p : node.ports) {
        if (p.number == 0) continue;
        if (!lid) set_note(p.note, "counters not read: the switch has no LID");
        else t.ports.push_back(p.number);
      }
      if (lid) targets.push_back(std::move(t));
    } else {
      for (auto& p : node.ports) {
        if (!p.info || p.info->lid == 0) {
          set_note(p.note, "counters not read: the port has no LID");
          continue;
        }
        targets.push_back({p.info->lid, n, {p.number}});
      }
    }
  }
  struct Pending {
    bool base_ok = false, ext_wanted = false, ext_ok = false, failed = false;
  };
  std::map<std::pair<int, int>, Pending> pend;
  auto port_of = [&s](int n, int pn) { return s.nodes[n].port(pn); };

  for (const auto& t : targets) {
    MadRequest r;
    r.mad = mad::pma_get(mad::ClassPortInfo, 0, 0);
    r.dlid = t.lid;
    r.on_fail = [&s, t, port_of](const std::string& why) {
      std::string text = "counters not read: no PerfMgt answer from LID " + std::to_string(t.lid) + " (" + why + ")";
      for (int pn : t.ports)
        if (auto* p = port_of(t.node, pn)) set_note(p->note, text);
      set_note(s.nodes[t.node].note, text);
    };
    r.on_reply = [&e, &pend, t, port_of](std::span<const std::uint8_t> m) {
      std::uint16_t cap = mad::decode_pma_capability(mad::pma_data(m));
      bool xmit_wait = cap & mad::kPmaXmitWait;
      bool ext = cap & (mad::kPmaExtWidth | mad::kPmaExtWidthNoIetf);
      for (int pn : t.ports) {
        int node = t.node;
        pend[{node, pn}].ext_wanted = ext;
        auto fail = [&pend, node, pn, port_of, lid = t.lid](const char* what) {
          return [&pend, node, pn, port_of, lid, what](const std::string& why) {
            pend[{node, pn}].failed = true;
            if (auto* p = port_of(node, pn)) {
              p->counters.reset();
              set_note(p->note, std::string("counters not read: no ") + what + " answer from LID " +
                                    std::to_string(lid) + " (" + why + ")");
            }
          };
        };
        MadRequest pc;
        pc.mad = mad::pma_get(mad::PortCounters, pn, 0);
        pc.dlid = t.lid;
        pc.on_fail = fail("PortCounters");
        auto on_base_fail = pc.on_fail;
        pc.on_reply = [&pend, node, pn, port_of, xmit_wait, on_base_fail](std::span<const std::uint8_t> m) {
          auto& st = pend[{node, pn}];
          if (st.failed) return;
          auto* p = port_of(node, pn);
          if (!p) return;
          int sel = mad::decode_port_select(mad::pma_data(m));
          if (sel != pn) return on_base_fail("the answer is for port " + std::to_string(sel));
          if (!p->counters) p->counters.emplace();
          bool had_ext = p->counters->extended;
          Counters ext_values = *p->counters;
          mad::decode_port_counters(mad::pma_data(m), xmit_wait, *p->counters);
          if (had_ext) {  // the extended answer came first: keep its 64-bit data counters
            for (Counter c : {Counter::PortXmitData, Counter::PortRcvData, Counter::PortXmitPkts, Counter::PortRcvPkts})
              (*p->counters)[c] = ext_values[c];
            p->counters->extended = true;
          }
          st.base_ok = true;
        };
        e.submit(std::move(pc));
        if (ext) {
          MadRequest px;
          px.mad = mad::pma_get(mad::PortCountersExtended, pn, 0);
          px.dlid = t.lid;
          px.on_fail = fail("PortCountersExtended");
          auto on_ext_fail = px.on_fail;
          px.on_reply = [&pend, node, pn, port_of, on_ext_fail](std::span<const std::uint8_t> m) {
            auto& st = pend[{node, pn}];
            if (st.failed) return;
            auto* p = port_of(node, pn);
            if (!p) return;
            int sel = mad::decode_port_select(mad::pma_data(m));
            if (sel != pn) return on_ext_fail("the answer is for port " + std::to_string(sel));
            if (!p->counters) p->counters.emplace();
            mad::decode_port_counters_ext(mad::pma_data(m), *p->counters);
            st.ext_ok = true;
          };
          e.submit(std::move(px));
        }
      }
    };
    e.submit(std::move(r));
  }
  e.run(max_inflight, per_dest);
  for (auto& [key, st] : pend)
    if (st.failed)
      if (auto* p = port_of(key.first, key.second)) p->counters.reset();
}

void collect_sms(Subnet& s, MadEngine& e, int max_inflight, int per_dest) {
  s.sms.clear();
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n) {
    auto& node = s.nodes[n];
    for (auto& p : node.ports) {
      if (!p.info || !(p.info->capability_mask & mad::kCapIsSM)) continue;
      if (node.type == NodeType::Switch && p.number != 0) continue;
      MadRequest r;
      r.mad = mad::smp_dr_get(mad::SMInfo, 0, 0, mad::parse_dr_path(node.dr_path));
      std::uint16_t lid = p.info->lid;
      r.on_reply = [&s, n, lid](std::span<const std::uint8_t> m) {
        SmInfo sm = mad::decode_sm_info(mad::smp_data(m));
        sm.lid = lid;
        sm.node = n;
        s.sms.push_back(sm);
      };
      int pn = p.number;
      r.on_fail = [&s, n, pn](const std::string& why) {
        std::string text = "SMInfo not read (" + why + ")";
        if (auto* port = s.nodes[n].port(pn)) set_note(port->note, text);
        s.notes.push_back(s.name(n) + " port " + std::to_string(pn) + " has an SM: " + text);
      };
      e.submit(std::move(r));
    }
  }
  e.run(max_inflight, per_dest);
  std::sort(s.sms.begin(), s.sms.end(), [](const SmInfo& a, const SmInfo& b) {
    return std::pair(a.lid, a.guid) < std::pair(b.lid, b.guid);
  });
}

// Every switch's LinearForwardingTable: SwitchInfo for LinearFDBTop, then blocks 0..top/64, all
// by directed route and up to max_inflight in flight. A switch whose table cannot be read whole
// keeps an empty lft and gets a note: a route through it is an error, never a guess.
void collect_lfts(Subnet& s, MadEngine& e, int max_inflight, int per_dest) {
  struct Table {
    std::vector<std::uint8_t> lft;
    std::string error;
  };
  std::map<int, Table> tables;
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n) {
    Node& node = s.nodes[n];
    if (node.type != NodeType::Switch) continue;
    node.lft.clear();
    Table& t = tables[n];
    std::vector<std::uint8_t> path;
    try {
      path = mad::parse_dr_path(node.dr_path);
    } catch (const Error& err) {
      t.error = err.what();
      continue;
    }
    MadRequest r;
    r.mad = mad::smp_dr_get(mad::SwitchInfo, 0, 0, path);
    r.on_fail = [&t](const std::string& why) { t.error = "no SwitchInfo answer (" + why + ")"; };
    r.on_reply = [&e, &t, path](std::span<const std::uint8_t> m) {
      // Unicast LIDs end at 0xbfff; a larger top would only cover multicast LIDs.
      const int top = std::min<int>(mad::decode_switch_info(mad::smp_data(m)).linear_fdb_top, 0xbfff);
      t.lft.assign(static_cast<std::size_t>(top) + 1, 0xff);
      for (int b = 0; b <= top / 64; ++b) {
        MadRequest q;
        q.mad = mad::smp_dr_get(mad::LinearForwardingTable, static_cast<std::uint32_t>(b), 0, path);
        q.on_fail = [&t, b](const std::string& why) {
          if (t.error.empty()) t.error = "no answer for LinearForwardingTable block " + std::to_string(b) + " (" + why + ")";
        };
        q.on_reply = [&t, b](std::span<const std::uint8_t> m2) {
          const auto block = mad::decode_lft_block(mad::smp_data(m2));
          for (std::size_t i = 0; i < 64 && b * 64 + i < t.lft.size(); ++i) t.lft[b * 64 + i] = block[i];
        };
        e.submit(std::move(q));
      }
    };
    e.submit(std::move(r));
  }
  e.run(max_inflight, per_dest);
  for (auto& [n, t] : tables) {
    Node& node = s.nodes[n];
    if (t.error.empty()) {
      node.lft = std::move(t.lft);
      continue;
    }
    const std::string text = "forwarding table not read: " + t.error;
    set_note(node.note, text);
    s.notes.push_back(s.name(n) + " (" + guid_hex(node.guid) + "): " + text);
  }
}

}  // namespace

Subnet sweep(const SweepOptions& opt) {
  const UmadLib& l = umad_lib();
  LocalPort lp = choose_port(l, opt.ca, opt.port);
  auto t0 = std::chrono::steady_clock::now();
  MadEngine e(l, lp, opt.timeout_ms, opt.retries);
  SmpTransport t;
  t.submit = [&e](std::uint16_t attr, std::uint32_t mod, const std::vector<std::uint8_t>& path,
                  SmpTransport::OnReply on_reply, SmpTransport::OnFail on_fail) {
    MadRequest r;
    r.mad = mad::smp_dr_get(attr, mod, 0, path);
    r.on_reply = [cb = std::move(on_reply)](std::span<const std::uint8_t> m) { cb(mad::smp_data(m)); };
    r.on_fail = std::move(on_fail);
    e.submit(std::move(r));
  };
  t.run = [&e, &opt] { e.run(opt.max_smps, opt.max_per_dest); };
  Subnet s;
  try {
    s = discover(t);
  } catch (const AccessError& err) {
    throw AccessError(err.kind, "subnet discovery from " + lp.ca + ":" + std::to_string(lp.port) + " failed: " +
                                    err.what() + " (is the port's link up and a subnet manager running?)");
  }
  s.source = lp.ca + ":" + std::to_string(lp.port);
  s.swept_at = now_iso();
  std::vector<std::string> discovery_notes;  // a node's own notes before the counters add theirs
  for (const auto& n : s.nodes) discovery_notes.push_back(n.note);

  collect_sms(s, e, opt.max_smps, opt.max_per_dest);
  if (opt.counters) {
    collect_counters(s, e, opt.max_inflight, opt.max_per_dest);
    for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n)
      if (s.nodes[n].note != discovery_notes[n]) s.notes.push_back(s.name(n) + ": " + s.nodes[n].note);
  }
  if (opt.routes) collect_lfts(s, e, opt.max_smps, opt.max_per_dest);
  s.mads_sent = e.sent();
  s.mads_timed_out = e.timed_out();
  s.rebuild_links();
  s.sweep_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

void read_counters(Subnet& s, const SweepOptions& opt) {
  const UmadLib& l = umad_lib();
  LocalPort lp = port_for(l, s, opt);
  MadEngine e(l, lp, opt.timeout_ms, opt.retries);
  for (auto& n : s.nodes) {
    if (n.note.rfind("counters not read", 0) == 0) n.note.clear();
    for (auto& p : n.ports)
      if (p.note.rfind("counters not read", 0) == 0) p.note.clear();
  }
  collect_counters(s, e, opt.max_inflight, opt.max_per_dest);
  s.mads_sent = e.sent();
  s.mads_timed_out = e.timed_out();
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n)
    if (s.nodes[n].note.rfind("counters not read", 0) == 0)
      s.notes.push_back(s.name(n) + ": " + s.nodes[n].note);
}

std::vector<Hop> trace_route(const Subnet& s, int src, std::uint16_t dst_lid, const SweepOptions& opt,
                             int src_port) {
  std::optional<MadEngine> e;  // opened at the first switch: a route between two linked HCAs needs none
  const UmadLib* l = nullptr;
  LocalPort lp;
  auto live = [&](int node, std::uint16_t lid) -> int {
    if (!e) {
      l = &umad_lib();
      lp = port_for(*l, s, opt);
      e.emplace(*l, lp, opt.timeout_ms, opt.retries);
    }
    const Node& sw = s.nodes[node];
    std::array<std::uint8_t, 64> block{};
    std::string err;
    MadRequest r;
    r.mad = mad::smp_dr_get(mad::LinearForwardingTable, lid / 64, 0, mad::parse_dr_path(sw.dr_path));
    r.on_reply = [&block](std::span<const std::uint8_t> m) { block = mad::decode_lft_block(mad::smp_data(m)); };
    r.on_fail = [&err](const std::string& why) { err = why; };
    e->submit(std::move(r));
    e->run(1);
    if (!err.empty())
      throw Error("route to LID " + std::to_string(lid) + ": the forwarding table of switch " + s.name(node) + " (" +
                  guid_hex(sw.guid) + ") could not be read (" + err + ")");
    return block[lid % 64];
  };
  return walk_route(s, src, src_port, dst_lid, live, "trace_route");
}

#endif

}  // namespace fabscope::fabric
