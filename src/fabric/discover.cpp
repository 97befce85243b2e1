#include "fabric/discover.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <unordered_map>

#include "fabric/mad.hpp"
#include "fabric/sweep.hpp"

namespace fabscope::fabric {

namespace {

using Data = std::array<std::uint8_t, mad::kSmpDataSize>;

Data copy(std::span<const std::uint8_t> d) {
  Data out{};
  std::copy_n(d.begin(), std::min(d.size(), out.size()), out.begin());
  return out;
}

struct FoundPort {
  std::uint64_t guid = 0;
  bool requested = false;           // PortInfo asked for
  std::optional<Data> info;         // PortInfo's data as answered
  std::string error;                // why PortInfo is missing
  int remote = -1, remote_port = 0; // index into Walk::nodes
  std::string far_note;             // the far end was probed and did not answer, or was too far
};

struct FoundNode {
  mad::NodeInfoFields ni;
  int level = -1;                   // hops of its path; -1 until its level is over
  std::vector<std::uint8_t> path;
  std::optional<std::string> desc;
  std::string desc_error;
  std::map<int, FoundPort> ports;
};

// What one NodeInfo probe is: the path, and the port it left from (node -1: the local probe).
struct Probe {
  std::vector<std::uint8_t> path;
  int from = -1, from_port = 0;
};

std::string dr_text(const std::vector<std::uint8_t>& path) {
  std::string s = "0";
  for (auto p : path) s += "," + std::to_string(p);
  return s;
}

class Walk {
 public:
  explicit Walk(const SmpTransport& t) : t_(t) {}

  void run() {
    std::vector<Probe> level{Probe{}};
    for (int hops = 0; !level.empty(); ++hops) level = step(level, hops);
  }

  Subnet result() const;

 private:
  // Sends a level's probes, and for each node they find first, its description and PortInfo;
  // returns the next level's probes.
  std::vector<Probe> step(const std::vector<Probe>& probes, int hops) {
    std::vector<std::optional<mad::NodeInfoFields>> answers(probes.size());
    std::vector<std::string> errors(probes.size());
    for (std::size_t i = 0; i < probes.size(); ++i) {
      const auto& path = probes[i].path;
      t_.submit(
          mad::NodeInfo, 0, path,
          [this, i, path, &answers](std::span<const std::uint8_t> d) {
            auto ni = mad::decode_node_info(d);
            answers[i] = ni;
            node_reached(ni, path);
          },
          [i, &errors](const std::string& why) { errors[i] = why; });
    }
    t_.run();

    // In the order of the probes (each level's paths in order): a node's first path is its path.
    std::vector<int> fresh;
    for (std::size_t i = 0; i < probes.size(); ++i) {
      const Probe& pr = probes[i];
      if (!answers[i]) {
        if (pr.from < 0)
          throw AccessError(AccessError::Kind::Failed,
                            "the local port did not answer NodeInfo (" + errors[i] + ")");
        nodes_[pr.from].ports[pr.from_port].far_note = "link is up but the far end did not answer discovery";
        continue;
      }
      int n = index_.at(answers[i]->node_guid);
      FoundNode& node = nodes_[n];
      if (node.level < 0) {
        node.level = hops;
        node.path = pr.path;
        node.ni = *answers[i];
        fresh.push_back(n);
      }
      const int local = answers[i]->local_port;
      node.ports[local].guid = answers[i]->port_guid;
      if (pr.from < 0) {
        local_node_ = n;
        local_port_ = local;
      } else {
        link(pr.from, pr.from_port, n, local);
      }
    }

    std::vector<Probe> next;
    for (int n : fresh) {
      FoundNode& node = nodes_[n];
      const bool sw = node.ni.type == NodeType::Switch;
      if (!sw && n != local_node_) continue;  // a directed route does not go through an HCA
      for (int pn = 1; pn <= node.ni.num_ports; ++pn) {
        if (!sw && pn != local_port_) continue;
        auto it = node.ports.find(pn);
        if (it == node.ports.end() || !it->second.info || it->second.remote >= 0) continue;
        auto info = mad::decode_port_info(*it->second.info);
        if (info.phys_state != PhysState::LinkUp) continue;
        if (static_cast<int>(node.path.size()) >= kMaxDrHops) {
          it->second.far_note = "link is up but the far end was not discovered: it is more than " +
                                std::to_string(kMaxDrHops) + " hops from the local port";
          continue;
        }
        Probe p{node.path, n, pn};
        p.path.push_back(static_cast<std::uint8_t>(pn));
        next.push_back(std::move(p));
      }
    }
    return next;
  }

  // A NodeInfo answer: a new node gets its description and PortInfo asked for; an HCA's PortInfo
  // of each port a path reaches it by.
  void node_reached(const mad::NodeInfoFields& ni, const std::vector<std::uint8_t>& path) {
    auto [it, added] = index_.emplace(ni.node_guid, static_cast<int>(nodes_.size()));
    const int n = it->second;
    if (added) {
      nodes_.emplace_back();
      nodes_[n].ni = ni;
      t_.submit(
          mad::NodeDesc, 0, path,
          [this, n](std::span<const std::uint8_t> d) { nodes_[n].desc = mad::decode_node_desc(d); },
          [this, n](const std::string& why) { nodes_[n].desc_error = why; });
    }
    if (ni.type == NodeType::Switch) {
      if (added)
        for (int pn = 0; pn <= ni.num_ports; ++pn) ask_port_info(n, pn, path);
    } else if (ni.local_port >= 1 && ni.local_port <= nodes_[n].ni.num_ports) {
      ask_port_info(n, ni.local_port, path);
    }
  }

  void ask_port_info(int n, int pn, const std::vector<std::uint8_t>& path) {
    FoundPort& p = nodes_[n].ports[pn];
    if (p.requested) return;
    p.requested = true;
    t_.submit(
        mad::PortInfo, static_cast<std::uint32_t>(pn), path,
        [this, n, pn](std::span<const std::uint8_t> d) { nodes_[n].ports[pn].info = copy(d); },
        [this, n, pn](const std::string& why) { nodes_[n].ports[pn].error = why; });
  }

  void link(int a, int ap, int b, int bp) {
    auto unlink = [this](int n, int pn) {
      FoundPort& p = nodes_[n].ports[pn];
      if (p.remote >= 0) {
        FoundPort& far = nodes_[p.remote].ports[p.remote_port];
        far.remote = -1;
        far.remote_port = 0;
      }
    };
    unlink(a, ap);
    unlink(b, bp);
    nodes_[a].ports[ap].remote = b;
    nodes_[a].ports[ap].remote_port = bp;
    nodes_[b].ports[bp].remote = a;
    nodes_[b].ports[bp].remote_port = ap;
  }

  const SmpTransport& t_;
  std::vector<FoundNode> nodes_;
  std::unordered_map<std::uint64_t, int> index_;  // node GUID -> nodes_
  int local_node_ = -1, local_port_ = 0;
};

Subnet Walk::result() const {
  // Switches, then HCAs, then routers, each by GUID: the same fabric gives the same order.
  std::vector<int> order;
  for (int n = 0; n < static_cast<int>(nodes_.size()); ++n)
    if (nodes_[n].level >= 0) order.push_back(n);
  auto rank = [](NodeType t) { return t == NodeType::Switch ? 0 : t == NodeType::Hca ? 1 : 2; };
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return std::pair(rank(nodes_[a].ni.type), nodes_[a].ni.node_guid) <
           std::pair(rank(nodes_[b].ni.type), nodes_[b].ni.node_guid);
  });
  std::vector<int> index(nodes_.size(), -1);
  for (std::size_t i = 0; i < order.size(); ++i) index[order[i]] = static_cast<int>(i);

  Subnet s;
  for (int fn : order) {
    const FoundNode& f = nodes_[fn];
    Node n;
    n.type = f.ni.type;
    n.guid = f.ni.node_guid;
    n.system_guid = f.ni.system_guid;
    n.vendor_id = f.ni.vendor_id;
    n.device_id = f.ni.device_id;
    n.revision = f.ni.revision;
    n.num_ports = f.ni.num_ports;
    n.dr_path = dr_text(f.path);
    if (f.desc) n.description = *f.desc;
    else n.note = "NodeDescription not read (" + f.desc_error + ")";
    const bool sw = n.type == NodeType::Switch;
    std::optional<std::uint32_t> cap0;
    if (auto p0 = f.ports.find(0); sw && p0 != f.ports.end() && p0->second.info)
      cap0 = mad::decode_port_info(*p0->second.info).capability_mask;
    for (int pn = sw ? 0 : 1; pn <= n.num_ports; ++pn) {
      Port p;
      p.number = pn;
      auto it = f.ports.find(pn);
      const FoundPort* fp = it == f.ports.end() ? nullptr : &it->second;
      if (!fp || !fp->requested) {  // e.g. an HCA's second port, cabled elsewhere or down
        p.note = "PortInfo not read: discovery did not reach this port";
        n.ports.push_back(std::move(p));
        continue;
      }
      p.guid = sw ? f.ni.port_guid : fp->guid;
      if (fp->remote >= 0 && index[fp->remote] >= 0) {
        p.remote_node = index[fp->remote];
        p.remote_port = fp->remote_port;
      }
      if (!fp->info) {
        p.note = "PortInfo not read (" + fp->error + ")";
        n.ports.push_back(std::move(p));
        continue;
      }
      p.info = mad::decode_port_info(*fp->info, sw && pn != 0 ? cap0 : std::nullopt);
      if (sw && pn != 0) {  // a switch's external ports: the LID is port 0's
        p.info->lid = 0;
        p.info->lmc = 0;
      }
      if (p.remote_node < 0 && pn != 0 && p.info->state >= PortState::Init)
        p.note = fp->far_note.empty() ? "link is up but the far end did not answer discovery" : fp->far_note;
      n.ports.push_back(std::move(p));
    }
    s.nodes.push_back(std::move(n));
  }
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n) {
    if (!s.nodes[n].note.empty()) s.notes.push_back(s.name(n) + ": " + s.nodes[n].note);
    for (const auto& p : s.nodes[n].ports)
      if (p.note.rfind("link is up but", 0) == 0)
        s.notes.push_back(s.name(n) + " port " + std::to_string(p.number) + ": " + p.note);
  }
  return s;
}

}  // namespace

Subnet discover(const SmpTransport& t) {
  Walk w(t);
  w.run();
  return w.result();
}

}  // namespace fabscope::fabric
