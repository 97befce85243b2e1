// LLDP neighbours from lldpcli: both JSON shapes on real captures (tests/fixtures/lldpcli/SOURCE),
// bad input named, and every way the tool can fail to answer.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "probe/lldp.hpp"
#include "support/fixtures.hpp"

using namespace fabscope;
using namespace fabscope::probe;
using fabscope::testing::fixture;

namespace {

std::string read(const std::string& name) {
  std::ifstream in(fixture("lldpcli") / name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<LldpEntry> load(const std::string& name) { return parse_lldpcli_json(read(name)); }

const LldpEntry& on(const std::vector<LldpEntry>& es, const std::string& netdev) {
  for (const auto& e : es)
    if (e.netdev == netdev) return e;
  throw std::runtime_error("no neighbour on " + netdev);
}

// The message of the Error parse_lldpcli_json throws, "" when it does not.
std::string parse_error(const std::string& text) {
  try {
    parse_lldpcli_json(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  auto p = s.find(from);
  if (p == std::string::npos) throw std::runtime_error("'" + from + "' not in the capture");
  return s.replace(p, from.size(), to);
}

Netdev netdev(const std::string& name) {
  Netdev n;
  n.name = name;
  return n;
}

ToolResult ran(std::string out, int exit_code = 0, std::string err = "") {
  ToolResult r;
  r.status = ToolResult::Status::Ran;
  r.exit_code = exit_code;
  r.out = std::move(out);
  r.err = std::move(err);
  return r;
}

// Sets an environment variable for the life of the object, then puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// An executable "lldpcli" in dir running body under /bin/sh.
void stand_in(const std::filesystem::path& dir, const std::string& body) {
  auto p = dir / "lldpcli";
  std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
  ::chmod(p.c_str(), 0755);
}

}  // namespace

TEST(LldpJson, OneNeighbourIsAnObjectAndEveryFieldIsRead) {
  auto es = load("lldpd-1.0.16-one-neighbor.json");
  ASSERT_EQ(es.size(), 1u);
  const auto& n = es[0].neighbor;
  EXPECT_EQ(es[0].netdev, "ens1f0");
  EXPECT_EQ(n.protocol, "LLDP");
  EXPECT_EQ(n.chassis_name, "leaf-a.pod1");
  EXPECT_EQ(n.chassis_id_type, "mac");
  EXPECT_EQ(n.chassis_id, "e6:f0:a1:88:78:d5");
  EXPECT_EQ(n.port_id, "swp7");
  EXPECT_EQ(n.port_id_type, "ifname");
  EXPECT_EQ(n.port_descr, "host-b:ens1f0");
  EXPECT_EQ(n.mfs_bytes, 9216);
  EXPECT_EQ(n.vlan_ids, (std::vector<int>{100, 200}));
  EXPECT_EQ(n.pvid, 100);
  EXPECT_EQ(n.mgmt_addresses, (std::vector<std::string>{"192.0.2.11", "2001:db8::11"}));
}

TEST(LldpJson, SeveralNeighboursAreAListWithSingleValuesUnwrapped) {
  auto es = load("lldpd-1.0.16-three-neighbors.json");
  ASSERT_EQ(es.size(), 3u);
  const auto& b = on(es, "ens1f1").neighbor;
  EXPECT_EQ(b.chassis_name, "leaf-b.pod1");
  EXPECT_EQ(b.port_id, "swp9");
  EXPECT_EQ(b.mfs_bytes, 1518);
  EXPECT_EQ(b.mgmt_addresses, (std::vector<std::string>{"192.0.2.12"}));  // one address: a string
  EXPECT_TRUE(b.vlan_ids.empty());
  EXPECT_FALSE(b.pvid);
}

TEST(LldpJson, NeighbourWithoutSystemNameOrFrameSizeKeepsThemEmpty) {
  // ens1f2's peer sends no System Name TLV: its chassis is {"id": ...}, not {"name": {...}}.
  const auto es = load("lldpd-1.0.16-three-neighbors.json");
  const auto& c = on(es, "ens1f2").neighbor;
  EXPECT_EQ(c.chassis_name, "");
  EXPECT_EQ(c.chassis_id, "c6:56:da:38:cf:ce");
  EXPECT_EQ(c.port_id_type, "mac");
  EXPECT_EQ(c.port_descr, "eth3");
  EXPECT_FALSE(c.mfs_bytes);
  EXPECT_EQ(c.mgmt_addresses, (std::vector<std::string>{"fe80::c456:daff:fe38:cfce"}));
}

TEST(LldpJson, Json0ShapeGivesTheSameNeighbours) {
  for (const auto& [plain, zero] : {std::pair{"lldpd-1.0.16-one-neighbor.json", "lldpd-1.0.16-one-neighbor-json0.json"},
                                    std::pair{"lldpd-1.0.16-three-neighbors.json",
                                              "lldpd-1.0.16-three-neighbors-json0.json"}}) {
    auto a = load(plain), b = load(zero);
    ASSERT_EQ(a.size(), b.size()) << zero;
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].netdev, b[i].netdev);
      EXPECT_EQ(json(a[i].neighbor), json(b[i].neighbor)) << zero << " " << a[i].netdev;
    }
  }
}

TEST(LldpJson, CumulusJson0CaptureWithVlansAndTwoAddresses) {
  auto es = load("cumulus-3.7.12-exit01.json");
  ASSERT_EQ(es.size(), 6u);
  const auto& s1 = on(es, "swp1").neighbor;
  EXPECT_EQ(s1.chassis_name, "spine01");
  EXPECT_EQ(s1.port_id, "swp6");
  EXPECT_EQ(s1.port_id_type, "ifname");
  EXPECT_EQ(s1.mgmt_addresses, (std::vector<std::string>{"10.0.0.21", "fe80::5054:ff:fe1b:9b7e"}));
  EXPECT_FALSE(s1.mfs_bytes);
  const auto& s5 = on(es, "swp5").neighbor;
  EXPECT_EQ(s5.chassis_name, "edge01");
  EXPECT_EQ(s5.port_id, "eth1");
  EXPECT_EQ(s5.vlan_ids, (std::vector<int>{2, 4}));
  EXPECT_FALSE(s5.pvid);  // "pvid": false on both
}

TEST(LldpJson, NoNeighboursInEitherShape) {
  EXPECT_TRUE(load("lldpd-1.0.16-no-neighbors.json").empty());
  EXPECT_TRUE(load("cumulus-3.7.12-no-neighbors.json").empty());
}

TEST(LldpJson, TextOutputIsNotJson) {
  auto e = parse_error(read("lldpd-ubuntu16.04-text-edge01.txt"));
  EXPECT_NE(e.find("not JSON"), std::string::npos) << e;
}

TEST(LldpJson, EmptyOutputIsNamed) {
  EXPECT_NE(parse_error("").find("empty output"), std::string::npos);
  EXPECT_NE(parse_error(" \n").find("empty output"), std::string::npos);
}

TEST(LldpJson, JsonOfAnotherToolIsNamed) {
  EXPECT_NE(parse_error(R"({"nftables": []})").find("'lldp' member"), std::string::npos);
  EXPECT_NE(parse_error("[1, 2]").find("'lldp' member"), std::string::npos);
  EXPECT_NE(parse_error(R"({"lldp": 5})").find("not an object"), std::string::npos);
  EXPECT_NE(parse_error(R"({"lldp": {"interface": 5}})").find("not an object"), std::string::npos);
}

TEST(LldpJson, OutOfRangeValuesNameTheirInterfaceAndField) {
  // Variants of the one-neighbour capture, one value changed each.
  const std::string one = read("lldpd-1.0.16-one-neighbor.json");
  auto e = parse_error(replaced(one, "\"mfs\": \"9216\"", "\"mfs\": \"99999\""));
  EXPECT_NE(e.find("interface 'ens1f0': port 'mfs' is '99999', not a frame size"), std::string::npos) << e;
  e = parse_error(replaced(one, "\"mfs\": \"9216\"", "\"mfs\": \"-1\""));
  EXPECT_NE(e.find("'mfs' is '-1'"), std::string::npos) << e;
  e = parse_error(replaced(one, "\"vlan-id\": \"200\"", "\"vlan-id\": \"5000\""));
  EXPECT_NE(e.find("'vlan-id' is '5000', not a VLAN id"), std::string::npos) << e;
  e = parse_error(replaced(one, "\"descr\": \"host-b:ens1f0\"", "\"descr\": 7"));
  EXPECT_NE(e.find("port 'descr' is 7, not text"), std::string::npos) << e;
  e = parse_error(replaced(one, "\"ens1f0\"", "\"" + std::string(40, 'x') + "\""));
  EXPECT_NE(e.find("not a network interface name"), std::string::npos) << e;
  e = parse_error(replaced(one, "\"host-b:ens1f0\"", "\"" + std::string(2000, 'd') + "\""));
  EXPECT_NE(e.find("port 'descr' is 2000 bytes long"), std::string::npos) << e;
}

TEST(LldpJson, MissingPortOrChassisLeavesTheirFieldsEmpty) {
  json j = json::parse(read("lldpd-1.0.16-one-neighbor.json"));
  j["lldp"]["interface"]["ens1f0"].erase("port");
  auto es = parse_lldpcli_json(j.dump());
  ASSERT_EQ(es.size(), 1u);
  EXPECT_EQ(es[0].neighbor.chassis_name, "leaf-a.pod1");
  EXPECT_EQ(es[0].neighbor.port_id, "");
  EXPECT_FALSE(es[0].neighbor.mfs_bytes);
  j["lldp"]["interface"]["ens1f0"].erase("chassis");
  es = parse_lldpcli_json(j.dump());
  ASSERT_EQ(es.size(), 1u);
  EXPECT_EQ(es[0].neighbor.chassis_id, "");
  EXPECT_EQ(es[0].neighbor.vlan_ids.size(), 2u);
}

TEST(LldpJson, MoreThan4096NeighboursAreRefused) {
  json j = json::parse(read("lldpd-1.0.16-three-neighbors-json0.json"));
  json one = j["lldp"][0]["interface"][0];
  json& list = j["lldp"][0]["interface"];
  list = json::array();
  for (int i = 0; i < 4097; ++i) list.push_back(one);
  EXPECT_NE(parse_error(j.dump()).find("more than 4096 neighbours"), std::string::npos);
}

TEST(LldpJson, DescriptionsWithoutLldpKeysStillRead) {
  // fabscope.node written before the LLDP keys: netdevs without lldp_neighbors, no "lldp".
  NodeInfo n;
  n.netdevs = {netdev("ens1f0")};
  json j = n;
  j.erase("lldp");
  j["netdevs"][0].erase("lldp_neighbors");
  NodeInfo back = j.get<NodeInfo>();
  EXPECT_EQ(back.lldp.source, "");
  ASSERT_EQ(back.netdevs.size(), 1u);
  EXPECT_TRUE(back.netdevs[0].lldp_neighbors.empty());
}

TEST(LldpArgv, DefaultSocketOrTheOneNamedInTheEnvironment) {
  std::string err;
  EXPECT_EQ(lldpcli_argv(nullptr, err),
            (std::vector<std::string>{"lldpcli", "-f", "json", "show", "neighbors", "details"}));
  EXPECT_EQ(lldpcli_argv("", err).size(), 6u);
  EXPECT_EQ(lldpcli_argv("/run/ns1/lldpd.socket", err),
            (std::vector<std::string>{"lldpcli", "-u", "/run/ns1/lldpd.socket", "-f", "json", "show", "neighbors",
                                      "details"}));
  EXPECT_TRUE(err.empty());
  EXPECT_TRUE(lldpcli_argv("lldpd.socket", err).empty());
  EXPECT_NE(err.find("FABSCOPE_LLDPCLI_SOCKET='lldpd.socket' is not an absolute socket path"), std::string::npos)
      << err;
  EXPECT_TRUE(lldpcli_argv(("/" + std::string(200, 's')).c_str(), err).empty());
}

TEST(LldpResult, NeighboursGoToTheirNetdevs) {
  std::vector<Netdev> nds = {netdev("ens1f0"), netdev("ens1f1"), netdev("lo")};
  std::vector<std::string> notes;
  auto st = apply_lldpcli_result(ran(read("lldpd-1.0.16-three-neighbors.json")), nds, notes);
  EXPECT_EQ(st.source, "lldpcli");
  EXPECT_EQ(st.note, "");
  ASSERT_EQ(nds[0].lldp_neighbors.size(), 1u);
  EXPECT_EQ(nds[0].lldp_neighbors[0].chassis_name, "leaf-a.pod1");
  EXPECT_EQ(nds[1].lldp_neighbors.at(0).port_id, "swp9");
  EXPECT_TRUE(nds[2].lldp_neighbors.empty());
  // ens1f2 is not among the netdevs: left out, with a note naming it.
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "lldp: neighbours on interfaces not in sys/class/net left out: ens1f2");
}

TEST(LldpResult, LldpcliAbsentIsUnknownWithoutAProbeNote) {
  std::vector<Netdev> nds = {netdev("ens1f0")};
  std::vector<std::string> notes;
  ToolResult r;
  r.status = ToolResult::Status::NotFound;
  auto st = apply_lldpcli_result(r, nds, notes);
  EXPECT_EQ(st.source, "");
  EXPECT_EQ(st.note, "lldpcli not found (lldpd not installed): LLDP neighbours unknown");
  EXPECT_TRUE(notes.empty());
}

TEST(LldpResult, NoDaemonIsUnknownAndSaysSo) {
  std::vector<Netdev> nds;
  std::vector<std::string> notes;
  auto st = apply_lldpcli_result(
      ran("", 1,
          "2026-11-26T08:44:37 [WARN/control] unable to connect to socket /run/lldpd.socket: "
          "No such file or directory\n"),
      nds, notes);
  EXPECT_EQ(st.source, "");
  EXPECT_EQ(st.note,
            "lldpd not running (lldpcli: unable to connect to socket /run/lldpd.socket: No such file or directory): "
            "LLDP neighbours unknown");
  EXPECT_TRUE(notes.empty());
}

TEST(LldpResult, SocketNotPermittedIsANote) {
  std::vector<Netdev> nds;
  std::vector<std::string> notes;
  auto st = apply_lldpcli_result(
      ran("", 1, "[WARN/control] unable to connect to socket /run/lldpd.socket: Permission denied\n"), nds, notes);
  EXPECT_NE(st.note.find("not readable as this user"), std::string::npos) << st.note;
  ASSERT_EQ(notes.size(), 1u);
}

TEST(LldpResult, BadOutputIsANamedNoteNeverAnError) {
  std::vector<Netdev> nds = {netdev("ens1f0")};
  std::vector<std::string> notes;
  auto st = apply_lldpcli_result(ran(read("lldpd-ubuntu16.04-text-edge01.txt")), nds, notes);
  EXPECT_EQ(st.source, "");
  EXPECT_EQ(st.note, "lldpcli -f json show neighbors details: not JSON (lldpcli -f json prints a JSON object)");
  ASSERT_EQ(notes.size(), 1u);
  st = apply_lldpcli_result(ran(""), nds, notes);
  EXPECT_NE(st.note.find("empty output"), std::string::npos);
  st = apply_lldpcli_result(ran(std::string(8u << 20, ' ')), nds, notes);
  EXPECT_NE(st.note.find("8 MiB or more"), std::string::npos) << st.note;
  EXPECT_TRUE(nds[0].lldp_neighbors.empty());
}

TEST(LldpCollect, FixtureRootsDoNotAsk) {
  std::vector<Netdev> nds;
  std::vector<std::string> notes;
  auto st = collect_lldp(false, nds, notes);
  EXPECT_EQ(st.note, "LLDP neighbours are read on a live node only (lldpcli)");
  EXPECT_TRUE(notes.empty());
}

TEST(LldpCollect, StandInLldpcliGetsTheSocketAndItsOutputIsRead) {
  fabscope::testing::TempDir t;
  const auto capture = fixture("lldpcli") / "lldpd-1.0.16-one-neighbor.json";
  stand_in(t.path(), "printf '%s\\n' \"$@\" > '" + (t.path() / "args").string() + "'\ncat '" + capture.string() + "'");
  ScopedEnv path("PATH", t.path().string() + ":/bin:/usr/bin");
  ScopedEnv sock(kLldpSocketEnv, "/run/test/lldpd.socket");
  std::vector<Netdev> nds = {netdev("ens1f0")};
  std::vector<std::string> notes;
  auto st = collect_lldp(true, nds, notes);
  EXPECT_EQ(st.source, "lldpcli") << st.note;
  EXPECT_EQ(nds[0].lldp_neighbors.size(), 1u);
  std::ifstream in(t.path() / "args");
  std::stringstream args;
  args << in.rdbuf();
  EXPECT_EQ(args.str(), "-u\n/run/test/lldpd.socket\n-f\njson\nshow\nneighbors\ndetails\n");
}

TEST(LldpCollect, LldpcliThatDoesNotAnswerTimesOut) {
  fabscope::testing::TempDir t;
  stand_in(t.path(), "exec sleep 60");
  ScopedEnv path("PATH", t.path().string() + ":/bin:/usr/bin");
  std::vector<Netdev> nds = {netdev("ens1f0")};
  std::vector<std::string> notes;
  auto st = collect_lldp(true, nds, notes, 200);
  EXPECT_EQ(st.source, "");
  EXPECT_EQ(st.note, "lldpcli: no answer within 200 ms");
  ASSERT_EQ(notes.size(), 1u);
}
