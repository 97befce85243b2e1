// Discovery by directed route (src/fabric/discover.cpp) on a fake fabric that answers SMPs from
// a graph of switches and HCAs: paths, links, ports, LIDs, notes, a dual-port HCA, a node that
// never answers, loops and a chain longer than a directed route can go.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <optional>

#include "fabric/discover.hpp"
#include "fabric/mad.hpp"
#include "fabric/sweep.hpp"

using namespace fabscope::fabric;

namespace {

void put(std::array<std::uint8_t, 64>& d, std::size_t off, std::uint64_t v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) d[off + n - 1 - i] = static_cast<std::uint8_t>(v >> (8 * i));
}

struct FakeNode {
  NodeType type = NodeType::Switch;
  std::uint64_t guid = 0;
  int ports = 0;
  std::string desc;
  bool dead = false;                          // answers nothing (and forwards nothing)
  std::map<int, std::pair<int, int>> links;   // port -> (node, port)
  std::map<int, std::uint16_t> lids;          // HCA port -> LID; a switch's port 0
};

class FakeFabric {
 public:
  int add(NodeType type, std::uint64_t guid, int ports, const std::string& desc) {
    nodes.push_back({type, guid, ports, desc, false, {}, {}});
    return static_cast<int>(nodes.size()) - 1;
  }
  void cable(int a, int ap, int b, int bp) {
    nodes[a].links[ap] = {b, bp};
    nodes[b].links[bp] = {a, ap};
  }

  SmpTransport transport() {
    SmpTransport t;
    t.submit = [this](std::uint16_t attr, std::uint32_t mod, const std::vector<std::uint8_t>& path,
                      SmpTransport::OnReply r, SmpTransport::OnFail f) {
      queue_.push_back({attr, mod, path, std::move(r), std::move(f)});
    };
    t.run = [this] {
      while (!queue_.empty()) {
        Pending p = std::move(lifo ? queue_.back() : queue_.front());
        if (lifo) queue_.pop_back();
        else queue_.pop_front();
        ++sent[p.attr];
        if (auto d = answer(p.attr, p.mod, p.path)) p.on_reply(*d);
        else p.on_fail("no answer");
      }
    };
    return t;
  }

  std::vector<FakeNode> nodes;
  int local = 0, local_port = 1;
  bool lifo = false;                          // answer the newest request first
  std::map<std::uint16_t, int> sent;          // SMPs per attribute

 private:
  struct Pending {
    std::uint16_t attr;
    std::uint32_t mod;
    std::vector<std::uint8_t> path;
    SmpTransport::OnReply on_reply;
    SmpTransport::OnFail on_fail;
  };

  // The node at the end of path and the port the SMP came in by; nullopt where it is lost.
  std::optional<std::pair<int, int>> reach(const std::vector<std::uint8_t>& path) const {
    int n = local, in = local_port;
    for (std::size_t i = 0; i < path.size(); ++i) {
      const FakeNode& f = nodes[n];
      if (f.dead || (i > 0 && f.type != NodeType::Switch)) return std::nullopt;
      auto it = f.links.find(path[i]);
      if (it == f.links.end()) return std::nullopt;
      n = it->second.first;
      in = it->second.second;
    }
    if (nodes[n].dead) return std::nullopt;
    return std::pair(n, in);
  }

  std::optional<std::array<std::uint8_t, 64>> answer(std::uint16_t attr, std::uint32_t mod,
                                                     const std::vector<std::uint8_t>& path) const {
    auto at = reach(path);
    if (!at) return std::nullopt;
    const FakeNode& f = nodes[at->first];
    std::array<std::uint8_t, 64> d{};
    const bool sw = f.type == NodeType::Switch;
    if (attr == mad::NodeInfo) {
      d[2] = static_cast<std::uint8_t>(f.type);
      d[3] = static_cast<std::uint8_t>(f.ports);
      put(d, 4, f.guid, 8);
      put(d, 12, f.guid, 8);
      put(d, 20, sw ? f.guid : f.guid + at->second, 8);  // an HCA's port GUIDs differ per port
      d[36] = static_cast<std::uint8_t>(at->second);
      return d;
    }
    if (attr == mad::NodeDesc) {
      std::copy(f.desc.begin(), f.desc.end(), d.begin());
      return d;
    }
    if (attr == mad::PortInfo) {
      const int pn = static_cast<int>(mod);
      if (pn > f.ports || (!sw && pn == 0)) return std::nullopt;
      auto lid = f.lids.find(pn);
      if (lid != f.lids.end()) put(d, 16, lid->second, 2);
      if (sw && pn == 0) put(d, 20, mad::kCapExtendedSpeeds, 4);
      const bool up = pn == 0 || f.links.count(pn);
      d[31] = up ? 2 : 0;                                          // 4X
      d[32] = static_cast<std::uint8_t>(0x70 | (up ? 4 : 1));      // Active / Down
      d[33] = static_cast<std::uint8_t>((up ? 5 : 2) << 4);        // LinkUp / Polling
      return d;
    }
    return std::nullopt;
  }

  std::deque<Pending> queue_;
};

// The names and paths, "desc@path" in the subnet's order.
std::string paths(const Subnet& s) {
  std::string out;
  for (const auto& n : s.nodes) out += (out.empty() ? "" : " ") + n.description + "@" + n.dr_path;
  return out;
}

// Every link as "a:port-b:port" by description.
std::string links(Subnet s) {
  s.rebuild_links();
  std::string out;
  for (const auto& l : s.links)
    out += (out.empty() ? "" : " ") + s.nodes[l.a_node].description + ":" + std::to_string(l.a_port) + "-" +
           s.nodes[l.b_node].description + ":" + std::to_string(l.b_port);
  return out;
}

// h1 - sw1 - sw2 - h3, sw1 - h2, and two cables between sw1 and sw2 (a loop).
struct Small {
  FakeFabric f;
  int h1, h2, h3, sw1, sw2;
  Small() {
    sw1 = f.add(NodeType::Switch, 0x20, 6, "sw1");
    sw2 = f.add(NodeType::Switch, 0x10, 4, "sw2");  // the lower GUID: first in the order
    h1 = f.add(NodeType::Hca, 0x100, 1, "h1");
    h2 = f.add(NodeType::Hca, 0x200, 1, "h2");
    h3 = f.add(NodeType::Hca, 0x300, 1, "h3");
    f.local = h1;
    f.nodes[sw1].lids[0] = 2;
    f.nodes[sw2].lids[0] = 3;
    f.nodes[h1].lids[1] = 1;
    f.nodes[h2].lids[1] = 4;
    f.nodes[h3].lids[1] = 5;
    f.cable(h1, 1, sw1, 1);
    f.cable(sw1, 2, h2, 1);
    f.cable(sw1, 3, sw2, 1);
    f.cable(sw1, 4, sw2, 3);
    f.cable(sw2, 2, h3, 1);
  }
};

}  // namespace

TEST(FabricDiscover, WalksSwitchesAndHcasByShortestPaths) {
  Small t;
  Subnet s = discover(t.f.transport());
  EXPECT_EQ(paths(s), "sw2@0,1,3 sw1@0,1 h1@0 h2@0,1,2 h3@0,1,3,2");
  EXPECT_EQ(links(s), "sw2:1-sw1:3 sw2:2-h3:1 sw2:3-sw1:4 sw1:1-h1:1 sw1:2-h2:1");
  EXPECT_TRUE(s.notes.empty());
  const Node& sw1 = s.nodes[1];
  ASSERT_EQ(sw1.ports.size(), 7u);  // 0..6
  EXPECT_EQ(sw1.lid(), 2);
  EXPECT_EQ(sw1.ports[0].info->lid, 2);
  EXPECT_EQ(sw1.ports[1].info->lid, 0);  // an external port: the LID is port 0's
  EXPECT_EQ(sw1.ports[1].guid, 0x20u);
  EXPECT_EQ(sw1.ports[5].info->state, PortState::Down);
  EXPECT_EQ(sw1.ports[5].remote_node, -1);
  EXPECT_EQ(sw1.ports[5].note, "");
  const Node& h3 = s.nodes[4];
  EXPECT_EQ(h3.type, NodeType::Hca);
  EXPECT_EQ(h3.lid(), 5);
  EXPECT_EQ(h3.ports[0].guid, 0x301u);
  EXPECT_EQ(h3.ports[0].info->state, PortState::Active);
  // One NodeInfo per link and the local one: a link found from one end is not probed from the other.
  EXPECT_EQ(t.f.sent[mad::NodeInfo], 6);
  EXPECT_EQ(t.f.sent[mad::NodeDesc], 5);
  EXPECT_EQ(t.f.sent[mad::PortInfo], 7 + 5 + 3);
}

TEST(FabricDiscover, TheOrderOfTheAnswersChangesNothing) {
  Small a, b;
  b.f.lifo = true;
  Subnet sa = discover(a.f.transport()), sb = discover(b.f.transport());
  EXPECT_EQ(paths(sa), paths(sb));
  EXPECT_EQ(links(sa), links(sb));
  EXPECT_EQ(sa.nodes.size(), sb.nodes.size());
}

TEST(FabricDiscover, ADualPortHcaGetsEachPortItWasReachedBy) {
  Small t;
  int h4 = t.f.add(NodeType::Hca, 0x400, 2, "h4");
  int h5 = t.f.add(NodeType::Hca, 0x500, 2, "h5");
  t.f.nodes[h4].lids = {{1, 6}, {2, 7}};
  t.f.cable(t.sw2, 4, h4, 2);
  t.f.cable(t.sw1, 5, h4, 1);
  t.f.cable(t.sw1, 6, h5, 1);  // h5's port 2 is cabled nowhere
  Subnet s = discover(t.f.transport());
  int n4 = s.find_guid(0x400), n5 = s.find_guid(0x500);
  ASSERT_GE(n4, 0);
  ASSERT_GE(n5, 0);
  EXPECT_EQ(s.nodes[n4].dr_path, "0,1,5");  // the shorter of 0,1,5 and 0,1,3,4
  ASSERT_EQ(s.nodes[n4].ports.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const Port& p = s.nodes[n4].ports[i];
    ASSERT_TRUE(p.info) << i;
    EXPECT_EQ(p.info->lid, 6 + i);
    EXPECT_EQ(p.guid, 0x401u + i);
    EXPECT_GE(p.remote_node, 0);
  }
  EXPECT_EQ(s.nodes[s.nodes[n4].ports[1].remote_node].description, "sw2");
  const Port& unreached = s.nodes[n5].ports[1];
  EXPECT_FALSE(unreached.info);
  EXPECT_EQ(unreached.guid, 0u);
  EXPECT_EQ(unreached.note, "PortInfo not read: discovery did not reach this port");
  EXPECT_TRUE(s.notes.empty());
}

TEST(FabricDiscover, ANodeThatNeverAnswersIsANoteNotAnEnd) {
  Small t;
  t.f.nodes[t.sw2].dead = true;
  Subnet s = discover(t.f.transport());
  EXPECT_EQ(paths(s), "sw1@0,1 h1@0 h2@0,1,2");  // h3 lies behind sw2
  const Node& sw1 = s.nodes[0];
  for (int pn : {3, 4}) {
    EXPECT_EQ(sw1.ports[pn].remote_node, -1);
    EXPECT_EQ(sw1.ports[pn].note, "link is up but the far end did not answer discovery") << pn;
  }
  ASSERT_EQ(s.notes.size(), 2u);
  EXPECT_EQ(s.notes[0], s.name(0) + " port 3: link is up but the far end did not answer discovery");
}

TEST(FabricDiscover, ANodeThatStopsAfterNodeInfoGetsNotes) {
  Small t;
  FakeFabric& f = t.f;
  SmpTransport inner = f.transport();
  SmpTransport t2 = inner;
  // h2 answers NodeInfo only.
  t2.submit = [&](std::uint16_t attr, std::uint32_t mod, const std::vector<std::uint8_t>& path,
                  SmpTransport::OnReply r, SmpTransport::OnFail fail) {
    if (attr != mad::NodeInfo && path == std::vector<std::uint8_t>{1, 2}) {
      inner.submit(attr, mod, {1, 9}, std::move(r), std::move(fail));  // a path that leads nowhere
      return;
    }
    inner.submit(attr, mod, path, std::move(r), std::move(fail));
  };
  Subnet s = discover(t2);
  int h2 = s.find_guid(0x200);
  ASSERT_GE(h2, 0);
  EXPECT_EQ(s.nodes[h2].description, "");
  EXPECT_EQ(s.nodes[h2].note, "NodeDescription not read (no answer)");
  EXPECT_EQ(s.nodes[h2].ports[0].note, "PortInfo not read (no answer)");
  EXPECT_FALSE(s.nodes[h2].ports[0].info);
  EXPECT_GE(s.nodes[h2].ports[0].remote_node, 0);  // the link is known from the switch's side
}

TEST(FabricDiscover, ARingEndsWhereItStarted) {
  FakeFabric f;
  int h = f.add(NodeType::Hca, 0x100, 1, "h");
  int a = f.add(NodeType::Switch, 0x1, 3, "a");
  int b = f.add(NodeType::Switch, 0x2, 3, "b");
  int c = f.add(NodeType::Switch, 0x3, 3, "c");
  f.local = h;
  f.cable(h, 1, a, 1);
  f.cable(a, 2, b, 1);
  f.cable(b, 2, c, 1);
  f.cable(c, 2, a, 3);
  f.cable(b, 3, b, 3);  // a port looped onto itself
  Subnet s = discover(f.transport());
  EXPECT_EQ(paths(s), "a@0,1 b@0,1,2 c@0,1,3 h@0");
  EXPECT_EQ(links(s), "a:1-h:1 a:2-b:1 a:3-c:2 b:2-c:1");
  EXPECT_EQ(s.nodes[1].ports[3].remote_node, 1);
  EXPECT_EQ(s.nodes[1].ports[3].remote_port, 3);
  EXPECT_TRUE(s.notes.empty());
}

TEST(FabricDiscover, AChainLongerThanADirectedRouteEndsWithANote) {
  FakeFabric f;
  int h = f.add(NodeType::Hca, 0x100, 1, "h");
  f.local = h;
  int prev = h, prev_port = 1;
  for (int i = 0; i < 70; ++i) {
    int sw = f.add(NodeType::Switch, 0x1000 + i, 2, "s" + std::to_string(i));
    f.cable(prev, prev_port, sw, 1);
    prev = sw;
    prev_port = 2;
  }
  Subnet s = discover(f.transport());
  EXPECT_EQ(s.nodes.size(), 1u + kMaxDrHops);  // the HCA and the switches 1..63 hops away
  const Node& last = s.nodes[kMaxDrHops - 1];
  EXPECT_EQ(last.description, "s62");
  EXPECT_EQ(mad::parse_dr_path(last.dr_path).size(), static_cast<std::size_t>(kMaxDrHops));
  EXPECT_EQ(last.ports[2].note, "link is up but the far end was not discovered: it is more than 63 hops from "
                                "the local port");
  ASSERT_EQ(s.notes.size(), 1u);
}

TEST(FabricDiscover, ALocalPortThatDoesNotAnswerIsAnAccessError) {
  FakeFabric f;
  int h = f.add(NodeType::Hca, 0x100, 1, "h");
  f.nodes[h].dead = true;
  try {
    discover(f.transport());
    FAIL() << "no error";
  } catch (const AccessError& e) {
    EXPECT_EQ(e.kind, AccessError::Kind::Failed);
    EXPECT_NE(std::string(e.what()).find("did not answer NodeInfo"), std::string::npos);
  }
}
