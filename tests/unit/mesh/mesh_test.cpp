// The probe mesh: histograms in the exposition, the peer list, the selection's coverage and
// load, the wire format, and live meshes on loopback (answers, a wrong token, garbage, a peer
// that stops). Live tests poll under deadlines; nothing depends on a sleep finishing in time.
#include "mesh/mesh.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "core/error.hpp"
#include "core/socket.hpp"
#include "mesh/mesh_wire.hpp"
#include "core/metrics.hpp"

namespace fabscope::mesh {
namespace {

const std::string kToken = "0123456789abcdef0123";

TEST(MeshHistogram, ValueOnABound_CountsInThatBucket) {
  Histogram h({1e-6, 5e-6});
  h.observe(1e-6);
  h.observe(4e-6);
  h.observe(1);
  EXPECT_EQ(h.counts, (std::vector<std::uint64_t>{1, 1, 1}));
  EXPECT_EQ(h.count, 3u);
}

TEST(MeshHistogram, Exposition_HasCumulativeBucketsInfSumAndCount) {
  Histogram h({1e-6, 5e-6});
  h.observe(0.5e-6);
  h.observe(2e-6);
  h.observe(2);
  MetricFamily f{"x_seconds", MetricType::Histogram, "help", {}};
  add_histogram(f, {{"peer", "a"}}, h);
  EXPECT_EQ(render_text({f}),
            "# HELP x_seconds help\n# TYPE x_seconds histogram\n"
            "x_seconds_bucket{peer=\"a\",le=\"1e-06\"} 1\n"
            "x_seconds_bucket{peer=\"a\",le=\"5e-06\"} 2\n"
            "x_seconds_bucket{peer=\"a\",le=\"+Inf\"} 3\n"
            "x_seconds_sum{peer=\"a\"} 2.0000025\n"
            "x_seconds_count{peer=\"a\"} 3\n");
}

TEST(MeshHistogram, Merge_RefusesOtherBounds) {
  Histogram a({1}), b({2});
  EXPECT_THROW(a.merge(b), Error);
}

TEST(MeshPeers, File_ParsesHostsPortsIpv6AndSwitches) {
  auto l = parse_peer_list("# rack 1\nnode01 switch=leaf1\nnode02:9500\n[fe80::1]:9501\n10.0.0.7  # comment\n\n"
                           "node01\n",
                           "peers.txt", 9418);
  ASSERT_EQ(l.peers.size(), 4u) << "node01 twice counts once";
  EXPECT_TRUE(l.bad_lines.empty());
  std::map<std::string, MeshPeer> by;
  for (auto& p : l.peers) by[p.id] = p;
  EXPECT_EQ(by.at("node01").switch_name, "leaf1");
  EXPECT_EQ(by.at("node02:9500").port, 9500);
  EXPECT_EQ(by.at("[fe80::1]:9501").host, "fe80::1");
  EXPECT_EQ(by.at("10.0.0.7").port, 9418);
}

TEST(MeshPeers, BadLines_AreNamedByNumberAndTheRestKept) {
  auto l = parse_peer_list("good1\nbad host\nnode:99999\n-x\n[::1\ngood2 switch=\n" + std::string(2000, 'a') + "\n",
                           "peers.txt", 9418);
  ASSERT_EQ(l.peers.size(), 1u);
  EXPECT_EQ(l.peers[0].id, "good1");
  std::vector<std::size_t> lines;
  for (auto& b : l.bad_lines) lines.push_back(b.line);
  EXPECT_EQ(lines, (std::vector<std::size_t>{2, 3, 4, 5, 6, 7}));
  EXPECT_NE(l.bad_lines[1].why.find("99999"), std::string::npos) << l.bad_lines[1].why;
  EXPECT_NE(l.bad_lines[0].why.find("host"), std::string::npos) << l.bad_lines[0].why;
}

TEST(MeshPeers, Self_IsTheEntryWithOwnNameAndPort) {
  auto l = parse_peer_list("a\nb\n127.0.0.1:9000\n127.0.0.1:9001\n", "f", 9418);
  EXPECT_EQ(find_self(l.peers, {"b"}, 9418), std::optional<std::size_t>(3));  // sorted: 127…:9000, :9001, a, b
  EXPECT_EQ(find_self(l.peers, {"127.0.0.1"}, 9001), std::optional<std::size_t>(1));
  EXPECT_EQ(find_self(l.peers, {"c"}, 9418), std::nullopt);
}

// This node listed under a loopback name or another spelling of its address is still itself.
TEST(MeshPeers, Self_LoopbackAndOtherSpellingsOfOwnAddressesOnOwnPort) {
  for (const char* h : {"localhost", "LOCALHOST.", "127.1", "127.0.0.2", "::ffff:127.0.0.1", "::1", "0x7f.0.0.1"}) {
    const MeshPeer p{h, 9418, "", h};
    EXPECT_TRUE(is_self(p, {"node-a"}, 9418)) << h;
    EXPECT_FALSE(is_self(p, {"node-a"}, 9000)) << h << ": another port is another process";
  }
  EXPECT_TRUE(is_self(MeshPeer{"::ffff:10.1.2.3", 9418, "", "x"}, {"10.1.2.3"}, 9418));
  EXPECT_TRUE(is_self(MeshPeer{"10.1.2.3", 9418, "", "x"}, {"::ffff:10.1.2.3"}, 9418));
  EXPECT_TRUE(is_self(MeshPeer{"Node-A.", 9418, "", "x"}, {"node-a"}, 9418));
  EXPECT_FALSE(is_self(MeshPeer{"10.1.2.4", 9418, "", "x"}, {"10.1.2.3"}, 9418));
  EXPECT_FALSE(is_self(MeshPeer{"localhost-b", 9418, "", "x"}, {"node-a"}, 9418));
  EXPECT_EQ(canonical_host("2001:DB8:0:0::1"), "2001:db8::1");
}

std::vector<MeshPeer> nodes(std::size_t n, std::size_t per_switch = 0) {
  std::vector<MeshPeer> out;
  for (std::size_t i = 0; i < n; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "n%04zu", i);
    std::string sw = per_switch ? "leaf" + std::to_string(i / per_switch) : "";
    out.push_back(MeshPeer{name, 9418, sw, name});
  }
  return out;
}

TEST(MeshSelection, EveryPeerIsProbedWithinTheCoveragePeriod) {
  auto peers = nodes(101);
  SelectOptions o;
  o.sample = 4;
  auto first = select_peers(peers, 7, 0, "", 0, o);
  EXPECT_EQ(first.coverage_windows, 25u);  // 100 others, 4 a window
  std::set<std::size_t> seen;
  for (std::uint64_t w = 0; w < first.coverage_windows; ++w) {
    auto s = select_peers(peers, 7, 0, "", w, o);
    EXPECT_EQ(s.peers.size(), 4u);
    for (auto i : s.peers) {
      EXPECT_NE(i, 7u) << "never itself";
      seen.insert(i);
    }
  }
  EXPECT_EQ(seen.size(), 100u);
}

TEST(MeshSelection, EachNodeIsProbedByAboutKOthers_NotN) {
  auto peers = nodes(1000);
  SelectOptions o;
  o.sample = 4;
  for (std::uint64_t w : {0u, 13u}) {
    std::vector<int> probed_by(peers.size(), 0);
    for (std::size_t self = 0; self < peers.size(); ++self)
      for (auto i : select_peers(peers, self, 0, "", w, o).peers) ++probed_by[i];
    EXPECT_EQ(*std::max_element(probed_by.begin(), probed_by.end()), 4) << "window " << w;
  }
}

TEST(MeshSelection, SameSwitchPeersAreAlwaysProbed_UpToTheLimit) {
  auto peers = nodes(64, 8);  // 8 switches of 8 nodes
  SelectOptions o;
  o.sample = 2;
  o.max_neighbours = 8;
  for (std::uint64_t w = 0; w < 5; ++w) {
    auto s = select_peers(peers, 9, 0, "leaf1", w, o);
    ASSERT_EQ(s.peers.size(), 9u);  // 7 neighbours + 2 others
    for (std::size_t j = 0; j < 7; ++j) EXPECT_EQ(peers[s.peers[j]].switch_name, "leaf1");
    EXPECT_NE(peers[s.peers[7]].switch_name, "leaf1");
  }
  o.max_neighbours = 3;
  EXPECT_EQ(select_peers(peers, 9, 0, "leaf1", 0, o).peers.size(), 5u);
}

TEST(MeshSelection, FewPeers_AreAllProbedOnce) {
  auto peers = nodes(3);
  SelectOptions o;
  o.sample = 4;
  auto s = select_peers(peers, 0, 0, "", 5, o);
  EXPECT_EQ(s.peers.size(), 2u);
  EXPECT_EQ(s.coverage_windows, 1u);
  EXPECT_TRUE(select_peers({}, std::nullopt, 3, "", 0, o).peers.empty());
}

TEST(MeshWire, Hello_IsFramedAtItsNewlineAndBounded) {
  const auto h = mesh_hello(kToken);
  EXPECT_EQ(mesh_hello_size(h.substr(0, 5)), 0u);
  EXPECT_EQ(mesh_hello_size(h + "rest"), h.size());
  EXPECT_EQ(mesh_hello_token(h), kToken);
  EXPECT_THROW(mesh_hello_size("GET / HTTP/1.1\r\n"), Error);
  EXPECT_THROW(mesh_hello_size("FSMESH1 " + std::string(400, 'x')), Error);
}

TEST(MeshWire, ProbeAndReply_RoundTripAndRefuseOtherMagic) {
  auto p = encode_probe({0xdeadbeef, 42});
  auto d = decode_probe(p.data());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->seq, 0xdeadbeefu);
  EXPECT_EQ(d->opaque, 42u);
  auto r = encode_reply({7, 8, 1234});
  auto e = decode_reply(r.data());
  ASSERT_TRUE(e);
  EXPECT_EQ(e->delay_ns, 1234u);
  EXPECT_FALSE(decode_reply(p.data()));
  EXPECT_FALSE(decode_probe(r.data()));
}

TEST(MeshWire, OfferAcceptAndDatagrams_RoundTrip) {
  MeshRdmaEndpoint e;
  e.qpn = 0x1234;
  e.lid = 0;
  e.link = kMeshLinkEth;
  e.flags = kMeshFlagTimestamps;
  for (int i = 0; i < 16; ++i) e.gid[static_cast<std::size_t>(i)] = static_cast<unsigned char>(i * 7);
  auto o = encode_offer(e);
  ASSERT_TRUE(is_offer(o.data()));
  auto d = decode_offer(o.data());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->qpn, 0x1234u);
  EXPECT_EQ(d->gid, e.gid);
  EXPECT_EQ(d->flags, kMeshFlagTimestamps);

  MeshAccept a;
  a.ep = e;
  a.ep.link = kMeshLinkIb;
  a.ep.lid = 0xbeef;
  a.cookie = 0x0102030405060708ull;
  auto ab = encode_accept(a);
  auto ad = decode_accept(ab.data());
  ASSERT_TRUE(ad);
  EXPECT_EQ(ad->cookie, a.cookie);
  EXPECT_EQ(ad->ep.lid, 0xbeef);
  EXPECT_EQ(ad->status, MeshRdmaStatus::Ok);
  MeshAccept none;
  none.status = MeshRdmaStatus::NoRdma;
  auto nb = encode_accept(none);
  ASSERT_TRUE(decode_accept(nb.data()));
  EXPECT_EQ(decode_accept(nb.data())->status, MeshRdmaStatus::NoRdma);

  MeshDatagram g{MeshDatagramKind::Timing, 99, 0xabcdefull, 5, 123456789};
  auto gb = encode_datagram(g);
  auto gd = decode_datagram(gb.data(), gb.size());
  ASSERT_TRUE(gd);
  EXPECT_EQ(gd->kind, MeshDatagramKind::Timing);
  EXPECT_EQ(gd->seq, 99u);
  EXPECT_EQ(gd->cookie, 0xabcdefull);
  EXPECT_EQ(gd->hw_delay_ns, 123456789u);
}

TEST(MeshWire, OfferAcceptAndDatagrams_RefuseWhatIsNotOurs) {
  MeshRdmaEndpoint e;
  e.link = kMeshLinkEth;
  e.qpn = 0;  // an offer without a QP
  EXPECT_FALSE(decode_offer(encode_offer(e).data()));
  e.qpn = 1u << 24;  // QP numbers have 24 bits
  EXPECT_FALSE(decode_offer(encode_offer(e).data()));
  e.qpn = 5;
  e.link = 9;  // unknown link layer
  EXPECT_FALSE(decode_offer(encode_offer(e).data()));
  auto p = encode_probe({1, 2});
  EXPECT_FALSE(is_offer(p.data()));
  MeshAccept a;
  a.status = MeshRdmaStatus::Ok;  // ok without an endpoint
  EXPECT_FALSE(decode_accept(encode_accept(a).data()));
  auto bad = encode_accept({});
  bad[36] = 77;  // unknown status
  EXPECT_FALSE(decode_accept(bad.data()));
  auto g = encode_datagram({MeshDatagramKind::Probe, 1, 2, 0, 0});
  EXPECT_FALSE(decode_datagram(g.data(), g.size() - 1)) << "short";
  g[4] = 4;
  EXPECT_FALSE(decode_datagram(g.data(), g.size())) << "unknown kind";
  g[4] = 1;
  g[0] = 'X';
  EXPECT_FALSE(decode_datagram(g.data(), g.size())) << "magic";
}

TEST(MeshWire, NetworkRtt_IsTheProbersSpanLessTheRespondersByDeviceClocks) {
  EXPECT_EQ(mesh_network_rtt_ns(12'000, 7'500), 4'500u);
  EXPECT_FALSE(mesh_network_rtt_ns(5'000, 6'000)) << "clocks misread: never a negative network";
  EXPECT_FALSE(mesh_network_rtt_ns(0, 10));
  EXPECT_FALSE(mesh_network_rtt_ns(10, 0));
  EXPECT_EQ(mesh_ticks_to_ns(156'250, 156'250), 1'000'000u) << "156.25 MHz: 156250 ticks are 1 ms";
  EXPECT_EQ(mesh_ticks_to_ns(1'000'000'000, 1'000'000), 1'000'000'000u) << "1 GHz";
  EXPECT_EQ(mesh_ticks_to_ns(3'600ull * 1'000'000'000ull, 1'000'000), 3'600ull * 1'000'000'000ull) << "an hour";
  EXPECT_FALSE(mesh_ticks_to_ns(5, 0));
}

TEST(MeshWire, ProberDatagram_CountsOnlyWithOurCookieFromTheRespondersQueuePair) {
  const MeshUdExpect ours{true, 17, true, 42};
  const MeshDatagram reply{MeshDatagramKind::Reply, 42, 0x1234, 900, 0};
  const MeshDatagram timing{MeshDatagramKind::Timing, 42, 0x1234, 0, 300};
  EXPECT_EQ(judge_prober_datagram(reply, 17, ours), MeshUdVerdict::Answer);
  EXPECT_EQ(judge_prober_datagram(timing, 17, ours), MeshUdVerdict::Timing);
  EXPECT_EQ(judge_prober_datagram(reply, 18, ours), MeshUdVerdict::Stranger) << "our cookie from another QP";
  EXPECT_EQ(judge_prober_datagram(timing, 18, ours), MeshUdVerdict::Stranger);
  EXPECT_EQ(judge_prober_datagram(reply, 17, MeshUdExpect{}), MeshUdVerdict::Stranger) << "a cookie not held here";
  MeshDatagram other = reply;
  other.seq = 41;
  EXPECT_EQ(judge_prober_datagram(other, 17, ours), MeshUdVerdict::Late) << "a reply to an older probe";
  MeshUdExpect idle = ours;
  idle.outstanding = false;
  EXPECT_EQ(judge_prober_datagram(reply, 17, idle), MeshUdVerdict::Late) << "no probe under way";
  MeshDatagram probe = reply;
  probe.kind = MeshDatagramKind::Probe;
  EXPECT_EQ(judge_prober_datagram(probe, 17, ours), MeshUdVerdict::Stranger);
}

TEST(MeshWire, Token_TooShortOrWithSpaces_IsNamedNotPrinted) {
  try {
    check_mesh_token("short", "/etc/fabscope/mesh.token");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/etc/fabscope/mesh.token"), std::string::npos);
    EXPECT_EQ(std::string(e.what()).find("short"), std::string::npos);
  }
  EXPECT_THROW(check_mesh_token("0123456789 abcdef", "x"), Error);
  EXPECT_NO_THROW(check_mesh_token(kToken, "x"));
}

TEST(MeshFamilies, EveryReasonIsRenderedAtZero_AndTheExpositionIsValid) {
  MeshView v;
  MeshPeerStats p;
  p.peer = "node02";
  p.sent = 3;
  v.peers.push_back(p);
  auto text = render_text(mesh_families(v));
  for (const char* r : kMeshErrorReasons)
    EXPECT_NE(text.find("fabscope_mesh_probe_errors_total{peer=\"node02\",transport=\"tcp\",reason=\"" +
                        std::string(r) + "\"} 0"),
              std::string::npos)
        << r;
  for (const char* r : kMeshRejectReasons)
    EXPECT_NE(text.find("fabscope_mesh_responder_rejected_total{reason=\"" + std::string(r) + "\"} 0"),
              std::string::npos);
  EXPECT_NE(text.find("fabscope_mesh_rtt_seconds_bucket{peer=\"node02\",transport=\"tcp\",le=\"5e-06\"} 0"),
            std::string::npos);
  EXPECT_EQ(text.find("fabscope_mesh_peer_up"), std::string::npos) << "no verdict before a probe finished";
}

TEST(MeshFamilies, RdmaEndpointAndNetworkRtt_RenderedOnlyWhenKnown) {
  MeshView v;
  MeshPeerStats p;
  p.peer = "node03";
  p.transport = "rdma_roce";
  v.peers.push_back(p);
  auto text = render_text(mesh_families(v));
  EXPECT_EQ(text.find("fabscope_mesh_network_rtt_seconds_bucket"), std::string::npos) << "no sample yet";
  EXPECT_EQ(text.find("fabscope_mesh_rdma_up "), std::string::npos) << "transport tcp or not tried";
  EXPECT_NE(text.find("fabscope_mesh_responder_probes_total{result=\"unknown_sender\"} 0"), std::string::npos);

  v.peers[0].network_rtt.observe(4e-6);
  v.rdma.enabled = v.rdma.tried = true;
  v.rdma.up = false;
  text = render_text(mesh_families(v));
  EXPECT_NE(text.find("fabscope_mesh_network_rtt_seconds_bucket{peer=\"node03\",transport=\"rdma_roce\",le=\"4e-06\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fabscope_mesh_rdma_up 0"), std::string::npos);
  EXPECT_EQ(text.find("fabscope_mesh_rdma_info{"), std::string::npos);
  v.rdma.up = true;
  v.rdma.device = "rxe0";
  v.rdma.port = 1;
  v.rdma.gid_index = 1;
  v.rdma.link_layer = "Ethernet";
  v.rdma.transport = "rdma_roce";
  text = render_text(mesh_families(v));
  EXPECT_NE(text.find("fabscope_mesh_rdma_up 1"), std::string::npos);
  EXPECT_NE(text.find("fabscope_mesh_rdma_info{device=\"rxe0\",port=\"1\",gid_index=\"1\",link_layer=\"Ethernet\","
                      "transport=\"rdma_roce\",timestamps=\"software\"} 1"),
            std::string::npos)
      << text;
}

// ---------- live meshes on loopback ----------
// peer() points into the view it is given: keep the view in a variable, never a temporary.

struct TempFile {
  std::filesystem::path path;
  explicit TempFile(const std::string& name)
      : path(std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {}
  ~TempFile() { std::filesystem::remove(path); }
  void write(const std::string& text) const { std::ofstream(path) << text; }
};

MeshOptions loopback(const std::string& token = kToken) {
  MeshOptions o;
  o.listen_host = "127.0.0.1";
  o.listen_port = 0;
  o.token = token;
  o.probes_per_second = 50;
  o.probe_timeout = std::chrono::milliseconds(2000);  // a loaded test machine is not a lossy network
  return o;
}

bool poll_until(const std::function<bool()>& cond, std::chrono::seconds limit = std::chrono::seconds(20)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return cond();
}

const MeshPeerStats* peer(const MeshView& v, const std::string& id) {
  for (const auto& p : v.peers)
    if (p.peer == id) return &p;
  return nullptr;
}

std::uint64_t errors(const MeshView& v, const std::string& id, const std::string& reason) {
  auto* p = peer(v, id);
  if (!p) return 0;
  auto it = p->errors.find(reason);
  return it == p->errors.end() ? 0 : it->second;
}

TEST(MeshLive, TwoNodes_AnswerEachOther_AndStopCountsAsLoss) {
  TempFile list("fabscope-mesh-peers");
  auto oa = loopback(), ob = loopback();
  oa.peers_file = ob.peers_file = list.path.string();
  Mesh a(oa);
  auto b = std::make_unique<Mesh>(ob);
  const std::string ida = "127.0.0.1:" + std::to_string(a.port()), idb = "127.0.0.1:" + std::to_string(b->port());
  list.write(ida + "\n" + idb + "\nnot a host\n");
  a.start();
  b->start();
  ASSERT_TRUE(poll_until([&] {
    auto v = a.view();
    auto* p = peer(v, idb);
    return p && p->answered >= 3;
  }));
  auto v = a.view();
  EXPECT_EQ(v.peers_listed, 1u) << "itself left out";
  EXPECT_EQ(v.peer_list_bad_lines, 1u);
  EXPECT_EQ(peer(v, ida), nullptr);
  EXPECT_TRUE(peer(v, idb)->up);
  EXPECT_GT(peer(v, idb)->rtt.count, 0u);
  ASSERT_TRUE(poll_until([&] { return b->view().responder.probes["answered"] >= 3; }));
  EXPECT_GT(b->view().responder.delay.count, 0u);

  b.reset();  // the peer stops
  ASSERT_TRUE(poll_until([&] {
    auto w = a.view();
    return errors(w, idb, "connect") + errors(w, idb, "closed") >= 2 && !peer(w, idb)->up;
  }));
}

TEST(MeshLive, WrongToken_IsRefusedAndCountedOnBothSides) {
  TempFile list("fabscope-mesh-peers-token");
  auto oa = loopback(), ob = loopback("ffffffffffffffffffff");
  oa.peers_file = list.path.string();
  Mesh a(oa), b(ob);
  const std::string idb = "127.0.0.1:" + std::to_string(b.port());
  list.write(idb + "\n");
  a.start();
  b.start();
  ASSERT_TRUE(poll_until([&] { return errors(a.view(), idb, "refused") >= 2; }));
  EXPECT_GE(b.view().responder.rejected["unauthenticated"], 2u);
  const auto v = a.view();
  ASSERT_NE(peer(v, idb), nullptr);
  EXPECT_EQ(peer(v, idb)->answered, 0u);
}

int connect_raw(int port) {
  std::string why;
  return net::connect_tcp("127.0.0.1", port, net::after(std::chrono::seconds(5)), why).release();
}

TEST(MeshLive, Garbage_SilenceAndFloods_AreCutAndCounted_WhileRealProbesGetAnswers) {
  TempFile list("fabscope-mesh-peers-hostile");
  auto oa = loopback(), ob = loopback();
  ob.hello_timeout = std::chrono::milliseconds(300);
  ob.answers_per_second_per_connection = 10;
  oa.peers_file = list.path.string();
  Mesh a(oa), b(ob);
  const std::string idb = "127.0.0.1:" + std::to_string(b.port());
  list.write(idb + "\n");
  b.start();

  net::Fd garbage(connect_raw(b.port()));
  ASSERT_TRUE(garbage);
  ASSERT_EQ(::send(garbage.get(), "GET / HTTP/1.1\r\n\r\n", 18, MSG_NOSIGNAL), 18);
  net::Fd silent(connect_raw(b.port()));
  ASSERT_TRUE(silent);
  net::Fd flood(connect_raw(b.port()));
  ASSERT_TRUE(flood);
  const auto hello = mesh_hello(kToken);
  ASSERT_EQ(::send(flood.get(), hello.data(), hello.size(), MSG_NOSIGNAL), static_cast<ssize_t>(hello.size()));
  // Valid probes as fast as the socket takes them, replies never read.
  std::string burst;
  for (int i = 0; i < 256; ++i) {
    auto p = encode_probe({static_cast<std::uint32_t>(i), 0});
    burst.append(reinterpret_cast<const char*>(p.data()), p.size());
  }
  ASSERT_TRUE(poll_until([&] {
    for (int i = 0; i < 8; ++i)
      if (::send(flood.get(), burst.data(), burst.size(), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) return true;  // cut
    return false;
  }));
  ASSERT_TRUE(poll_until([&] {
    auto r = b.view().responder;
    return r.rejected["garbage"] >= 1 && r.rejected["hello_timeout"] >= 1 && r.rejected["flood"] >= 1;
  }));
  EXPECT_GT(b.view().responder.probes["rate_limited"], 1000u);

  a.start();  // a real peer is still answered
  ASSERT_TRUE(poll_until([&] {
    const auto v = a.view();
    auto* p = peer(v, idb);
    return p && p->answered >= 3;
  }));
}

TEST(MeshLive, RdmaOffer_WithoutAnEndpointHere_IsAnsweredNoRdma_AndAForgedOneIsCut) {
  auto ob = loopback();
  Mesh b(ob);
  b.start();
  net::Fd c(connect_raw(b.port()));
  ASSERT_TRUE(c);
  const auto hello = mesh_hello(kToken);
  ASSERT_EQ(::send(c.get(), hello.data(), hello.size(), MSG_NOSIGNAL), static_cast<ssize_t>(hello.size()));
  MeshRdmaEndpoint e;
  e.qpn = 77;
  e.link = kMeshLinkEth;
  auto offer = encode_offer(e);
  ASSERT_EQ(::send(c.get(), offer.data(), offer.size(), MSG_NOSIGNAL), static_cast<ssize_t>(offer.size()));
  std::string in;
  ASSERT_TRUE(poll_until([&] {
    char buf[128];
    ssize_t n = ::recv(c.get(), buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) in.append(buf, static_cast<std::size_t>(n));
    return in.size() >= kMeshAnswerBytes + kMeshAcceptBytes;
  }));
  EXPECT_EQ(in.substr(0, kMeshAnswerBytes), kMeshAccepted);
  auto acc = decode_accept(reinterpret_cast<const unsigned char*>(in.data() + kMeshAnswerBytes));
  ASSERT_TRUE(acc);
  // No RDMA device on a test machine without one (and never one with this QP's GID of zeros).
  EXPECT_NE(acc->status, MeshRdmaStatus::Ok);
  EXPECT_EQ(acc->ep.qpn, 0u);
  // Probes still work over the same connection.
  auto p = encode_probe({5, 6});
  ASSERT_EQ(::send(c.get(), p.data(), p.size(), MSG_NOSIGNAL), 16);
  in.clear();
  ASSERT_TRUE(poll_until([&] {
    char buf[64];
    ssize_t n = ::recv(c.get(), buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) in.append(buf, static_cast<std::size_t>(n));
    return in.size() >= kMeshReplyBytes;
  }));
  auto r = decode_reply(reinterpret_cast<const unsigned char*>(in.data()));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->seq, 5u);
  // An offer with QP number 0 is not ours: cut as garbage.
  e.qpn = 0;
  offer = encode_offer(e);
  ASSERT_EQ(::send(c.get(), offer.data(), offer.size(), MSG_NOSIGNAL), static_cast<ssize_t>(offer.size()));
  ASSERT_TRUE(poll_until([&] { return b.view().responder.rejected["garbage"] >= 1; }));
  const auto v = b.view();
  EXPECT_TRUE(v.rdma.enabled);
}

TEST(MeshLive, TransportTcp_NeverOffersRdma) {
  TempFile list("fabscope-mesh-peers-tcp");
  auto oa = loopback(), ob = loopback();
  oa.rdma = ob.rdma = false;
  oa.peers_file = list.path.string();
  Mesh a(oa), b(ob);
  const std::string idb = "127.0.0.1:" + std::to_string(b.port());
  list.write(idb + "\n");
  a.start();
  b.start();
  ASSERT_TRUE(poll_until([&] {
    const auto v = a.view();
    auto* p = peer(v, idb);
    return p && p->answered >= 2;
  }));
  const auto v = a.view();
  EXPECT_EQ(peer(v, idb)->transport, "tcp");
  EXPECT_FALSE(v.rdma.tried);
  EXPECT_FALSE(b.view().rdma.tried);
}

TEST(MeshLive, TooManyStrangers_AreRefusedOverThePendingLimit) {
  auto ob = loopback();
  ob.max_pending = 4;
  Mesh b(ob);
  b.start();
  std::vector<net::Fd> conns;
  for (int i = 0; i < 12; ++i) conns.emplace_back(connect_raw(b.port()));
  ASSERT_TRUE(poll_until([&] { return b.view().responder.rejected["too_many_connections"] >= 8; }));
  EXPECT_LE(b.view().responder.connections_open, 4u);
}

// A resolver that holds every lookup until released (as a DNS server that never answers).
struct HeldResolver {
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool open = false;
    std::atomic<int> asked{0};
  };
  std::shared_ptr<Gate> gate = std::make_shared<Gate>();
  MeshResolveFn fn() const {
    auto g = gate;
    return [g](const std::string& name) -> std::vector<std::string> {
      ++g->asked;
      std::unique_lock<std::mutex> lock(g->mu);
      g->cv.wait(lock, [&] { return g->open; });
      throw Error("cannot resolve " + name + ": released");
    };
  }
  ~HeldResolver() {
    {
      std::lock_guard<std::mutex> lock(gate->mu);
      gate->open = true;
    }
    gate->cv.notify_all();
  }
};

bool hello_accepted(int port) {
  net::Fd c(connect_raw(port));
  if (!c) return false;
  const auto hello = mesh_hello(kToken);
  if (::send(c.get(), hello.data(), hello.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(hello.size())) return false;
  std::string in;
  poll_until([&] {
    char buf[16];
    ssize_t n = ::recv(c.get(), buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) in.append(buf, static_cast<std::size_t>(n));
    return in.size() >= kMeshAnswerBytes;
  });
  return in.substr(0, kMeshAnswerBytes) == kMeshAccepted;
}

// Name lookups run outside the mesh's loop: with --mesh-dns and a peer listed by name whose
// lookups never return, the node still answers probes, probes its peer listed by address, counts
// the late lookup as a list error, and stops at once.
TEST(MeshLive, ResolverThatNeverAnswers_HoldsNeitherTheResponderNorTheProber) {
  TempFile list("fabscope-mesh-peers-dns");
  HeldResolver held;
  auto oa = loopback(), ob = loopback();
  oa.peers_file = list.path.string();
  oa.dns_name = "peers.mesh.test";
  oa.resolve = held.fn();
  oa.resolve_timeout = std::chrono::milliseconds(100);
  oa.rotation_seconds = 1;  // the name is asked again every second (never while a lookup hangs)
  auto a = std::make_unique<Mesh>(oa);
  Mesh b(ob);
  const std::string idb = "127.0.0.1:" + std::to_string(b.port());
  list.write("held-peer.mesh.test:" + std::to_string(b.port()) + "\n" + idb + "\n");
  a->start();
  b.start();
  ASSERT_TRUE(poll_until([&] { return held.gate->asked.load() >= 2; }));  // both names asked, both held
  EXPECT_TRUE(hello_accepted(a->port()));
  ASSERT_TRUE(poll_until([&] {
    const auto v = a->view();
    auto* p = peer(v, idb);
    return p && p->answered >= 3 && v.peer_list_errors_total >= 1;
  }));
  ASSERT_TRUE(poll_until([&] { return errors(a->view(), "held-peer.mesh.test:" + std::to_string(b.port()), "connect") >= 1; }));
  EXPECT_LE(held.gate->asked.load(), 2) << "a name is asked again only once its lookup returned";
  a.reset();  // stops without waiting for the held lookups
}

// The last good answer of --mesh-dns stays when a later lookup fails.
TEST(MeshLive, DnsLookupFailing_KeepsTheLastGoodAnswer) {
  auto oa = loopback(), ob = loopback();
  Mesh b(ob);
  auto calls = std::make_shared<std::atomic<int>>(0);
  oa.dns_name = "peers.mesh.test";
  oa.peer_port = b.port();
  oa.rotation_seconds = 1;
  oa.resolve = [calls](const std::string& name) -> std::vector<std::string> {
    if ((*calls)++ == 0) return {"127.0.0.1"};
    throw Error("cannot resolve " + name + ": server failure");
  };
  Mesh a(oa);
  a.start();
  b.start();
  ASSERT_TRUE(poll_until([&] { return calls->load() >= 2 && a.view().peer_list_errors_total >= 1; }));
  const std::uint64_t answered_then = a.view().peers.empty() ? 0 : a.view().peers.front().answered;
  ASSERT_TRUE(poll_until([&] {
    const auto v = a.view();
    return v.peers_listed == 1 && v.peers.size() == 1 && v.peers.front().answered >= answered_then + 3;
  }));
}

TEST(MeshLive, SelfListedAsLocalhostOrAnotherSpelling_IsNeverProbed) {
  TempFile list("fabscope-mesh-peers-self");
  auto oa = loopback(), ob = loopback();
  oa.peers_file = list.path.string();
  Mesh a(oa), b(ob);
  const std::string pa = std::to_string(a.port());
  const std::string idb = "127.0.0.1:" + std::to_string(b.port());
  list.write("localhost:" + pa + "\n127.1:" + pa + "\n[::ffff:127.0.0.1]:" + pa + "\n" + idb + "\n");
  a.start();
  b.start();
  ASSERT_TRUE(poll_until([&] {
    const auto v = a.view();
    auto* p = peer(v, idb);
    return p && p->answered >= 5;
  }));
  const auto v = a.view();
  EXPECT_EQ(v.peers_listed, 1u);
  EXPECT_EQ(v.peers.size(), 1u) << "no series of a probe of itself";
  EXPECT_EQ(a.view().responder.probes["answered"], 0u) << "it answered its own probes";
}

// A listed peer that accepts the hello and then sends replies nobody asked for: the prober cuts
// the connection instead of reading them for ever.
TEST(MeshLive, PeerFloodingReplies_IsCutByTheProber) {
  net::Fd listener = net::listen_tcp("127.0.0.1", 0, 8, true);
  const int port = net::local_port(listener.get());
  TempFile list("fabscope-mesh-peers-flooder");
  list.write("127.0.0.1:" + std::to_string(port) + "\n");
  auto oa = loopback();
  oa.rdma = false;
  oa.peers_file = list.path.string();
  Mesh a(oa);
  a.start();
  pollfd p{listener.get(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 20000), 1);
  net::Fd c(::accept(listener.get(), nullptr, nullptr));
  ASSERT_TRUE(c);
  std::string hello;
  ASSERT_TRUE(poll_until([&] {
    char buf[256];
    ssize_t n = ::recv(c.get(), buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) hello.append(buf, static_cast<std::size_t>(n));
    return hello.find('\n') != std::string::npos;
  }));
  ASSERT_EQ(::send(c.get(), kMeshAccepted, kMeshAnswerBytes, MSG_NOSIGNAL), static_cast<ssize_t>(kMeshAnswerBytes));
  std::string burst;
  for (std::uint32_t i = 0; i < 64; ++i) {
    auto r = encode_reply({0x80000000u + i, 0, 0});
    burst.append(reinterpret_cast<const char*>(r.data()), r.size());
  }
  EXPECT_TRUE(poll_until([&] {
    for (int i = 0; i < 16; ++i) {
      if (::send(c.get(), burst.data(), burst.size(), MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EAGAIN &&
          errno != EWOULDBLOCK)
        return true;  // reset: the prober let go
      char b;
      if (::recv(c.get(), &b, 1, MSG_DONTWAIT) == 0) return true;
    }
    return false;
  })) << "the prober kept reading a flood of replies";
}

TEST(MeshLive, PeerListReload_PicksUpANewPeer) {
  TempFile list("fabscope-mesh-peers-reload");
  auto oa = loopback(), ob = loopback();
  oa.peers_file = list.path.string();
  oa.peers_file_check_seconds = 0.05;
  Mesh a(oa), b(ob);
  list.write("# nobody yet\n");
  a.start();
  b.start();
  ASSERT_TRUE(poll_until([&] { return a.view().peers_listed == 0; }));
  const std::string idb = "127.0.0.1:" + std::to_string(b.port());
  // A different size, so the change is seen even within the file system's timestamp granularity.
  list.write(idb + "\n");
  ASSERT_TRUE(poll_until([&] {
    const auto v = a.view();
    auto* p = peer(v, idb);
    return p && p->answered >= 1;
  }));
}

TEST(MeshLive, LabelLimit_SumsTheRestUnderOther) {
  TempFile list("fabscope-mesh-peers-limit");
  auto oa = loopback(), ob = loopback(), oc = loopback();
  oa.peers_file = list.path.string();
  oa.peer_label_limit = 1;
  Mesh a(oa), b(ob), c(oc);
  list.write("127.0.0.1:" + std::to_string(b.port()) + "\n127.0.0.1:" + std::to_string(c.port()) + "\n");
  a.start();
  b.start();
  c.start();
  ASSERT_TRUE(poll_until([&] {
    auto v = a.view();
    auto* o = peer(v, kMeshOtherPeer);
    return v.peers.size() == 2 && o && o->answered >= 1;
  }));
}

}  // namespace
}  // namespace fabscope::mesh
