// The fabscope.fabric schema: what to_json writes, subnet_from_json reads back unchanged, and
// every malformed document is refused with the field named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "fabric_builders.hpp"

using namespace fabscope;
using namespace fabscope::testing;

namespace {

// The message of the Error that reading j throws ("" when it reads).
std::string error_of(const json& j) {
  try {
    (void)subnet_from_json(j);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

json healthy_json() { return to_json(healthy_fabric()); }

}  // namespace

TEST(FabricJson, RoundTripKeepsEveryValue) {
  Subnet s = healthy_fabric();
  s.nodes[kLeaf.leaf1].firmware = "27.2010.6102";
  s.nodes[kLeaf.hca3].note = "NodeDescription timed out";
  port_of(s, kLeaf.hca2, 1).counters->value[0] = 12;
  port_of(s, kLeaf.hca2, 1).counters->value[static_cast<int>(Counter::PortRcvData)].reset();
  port_of(s, kLeaf.hca4, 1).info.reset();
  port_of(s, kLeaf.leaf2, 3).counters.reset();
  port_of(s, kLeaf.leaf2, 3).note = "PMA did not answer";
  s.notes.push_back("switch 0x5000 did not answer");
  const json j = to_json(s);
  const Subnet back = subnet_from_json(j);
  EXPECT_EQ(to_json(back), j);
  EXPECT_EQ(back.nodes.size(), s.nodes.size());
  EXPECT_EQ(back.links.size(), 8u);
  EXPECT_FALSE(back.nodes[kLeaf.hca4].ports[0].info.has_value());
  EXPECT_FALSE(back.nodes[kLeaf.hca2].ports[0].counters->value[static_cast<int>(Counter::PortRcvData)].has_value());
  EXPECT_EQ(*back.nodes[kLeaf.hca2].ports[0].counters->value[0], 12u);
  EXPECT_EQ(back.nodes[kLeaf.leaf1].firmware, "27.2010.6102");
  EXPECT_EQ(back.sms.size(), 2u);
  EXPECT_EQ(back.sms[0].state, SmState::Master);
}

TEST(FabricJson, WritesGuidsAsHexTextEnumsAsTextAndOnlyReadCounters) {
  Subnet s = healthy_fabric();
  port_of(s, kLeaf.hca1, 1).counters = Counters{};
  (*port_of(s, kLeaf.hca1, 1).counters)[Counter::SymbolErrorCounter] = 3;
  const json j = to_json(s);
  EXPECT_EQ(j["schema"], "fabscope.fabric");
  EXPECT_EQ(j["schema_version"], 1);
  const json& hca = j["nodes"][kLeaf.hca1];
  EXPECT_EQ(hca["guid"], "0x000000000000a000");
  EXPECT_EQ(hca["type"], "hca");
  EXPECT_EQ(hca["ports"][0]["info"]["state"], "Active");
  EXPECT_EQ(hca["ports"][0]["info"]["speed_active"], "HDR");
  EXPECT_EQ(hca["ports"][0]["info"]["width_supported"], json::array({1, 4}));
  EXPECT_EQ(hca["ports"][0]["counters"], json({{"SymbolErrorCounter", 3}}));
  EXPECT_EQ(j["sms"][0]["state"], "MASTER");
}

TEST(FabricJson, NotAnObjectOrAnotherSchemaIsRefused) {
  EXPECT_NE(error_of(json::array()).find("not a JSON object"), std::string::npos);
  json j = healthy_json();
  j["schema"] = "fabscope.check";
  EXPECT_NE(error_of(j).find("field 'schema' is \"fabscope.check\""), std::string::npos) << error_of(j);
  j = healthy_json();
  j["schema_version"] = 2;
  EXPECT_NE(error_of(j).find("field 'schema_version' is 2"), std::string::npos) << error_of(j);
}

TEST(FabricJson, MissingFieldIsNamed) {
  json j = healthy_json();
  j["nodes"][2]["ports"][3].erase("remote_node");
  EXPECT_EQ(error_of(j), "field 'nodes[2].ports[3].remote_node' is missing");
}

TEST(FabricJson, WrongTypeIsNamedWithTheValue) {
  json j = healthy_json();
  j["nodes"][0]["description"] = 7;
  EXPECT_EQ(error_of(j), "field 'nodes[0].description' is 7, not a string");
  j = healthy_json();
  j["nodes"][4]["ports"][0]["info"]["lid"] = 10.5;
  EXPECT_NE(error_of(j).find("field 'nodes[4].ports[0].info.lid' is 10.5, not an integer from 0 to 65535"),
            std::string::npos)
      << error_of(j);
}

TEST(FabricJson, OutOfRangeIntegersAreRefused) {
  json j = healthy_json();
  j["nodes"][4]["ports"][0]["info"]["lid"] = 70000;
  EXPECT_NE(error_of(j).find("info.lid' is 70000"), std::string::npos) << error_of(j);
  j = healthy_json();
  j["nodes"][4]["ports"][0]["info"]["mtu_active"] = 1500;
  EXPECT_NE(error_of(j).find("info.mtu_active' is 1500, not an MTU"), std::string::npos) << error_of(j);
  j = healthy_json();
  j["sms"][0]["priority"] = 16;
  EXPECT_NE(error_of(j).find("field 'sms[0].priority' is 16"), std::string::npos) << error_of(j);
}

TEST(FabricJson, BadGuidTextIsRefused) {
  json j = healthy_json();
  j["nodes"][1]["guid"] = "0xZZ";
  EXPECT_NE(error_of(j).find("field 'nodes[1].guid' is \"0xZZ\", not a GUID"), std::string::npos) << error_of(j);
  j["nodes"][1]["guid"] = "0x00000000000000000";  // 17 digits
  EXPECT_NE(error_of(j).find("not a GUID"), std::string::npos);
}

TEST(FabricJson, UnknownEnumTextIsRefusedWithTheKnownOnes) {
  json j = healthy_json();
  j["nodes"][4]["ports"][0]["info"]["state"] = "ACTIVE";
  EXPECT_NE(error_of(j).find("info.state' is \"ACTIVE\", not one of ?, Down, Init, Armed, Active"), std::string::npos)
      << error_of(j);
  j = healthy_json();
  j["nodes"][4]["ports"][0]["info"]["speed_supported"] = json::array({"HDR", "FOO"});
  EXPECT_NE(error_of(j).find("info.speed_supported[1]' is \"FOO\", not a speed"), std::string::npos) << error_of(j);
  j = healthy_json();
  j["nodes"][4]["ports"][0]["info"]["width_supported"] = json::array({4, 3});
  EXPECT_NE(error_of(j).find("info.width_supported[1]' is 3, not a width"), std::string::npos) << error_of(j);
}

TEST(FabricJson, CounterBeyondItsWidthOrUnknownIsRefused) {
  json j = healthy_json();
  j["nodes"][4]["ports"][0]["counters"]["LinkDownedCounter"] = 256;  // 8 bits
  EXPECT_NE(error_of(j).find("counters.LinkDownedCounter' is 256, beyond the counter's 8 bits (255)"),
            std::string::npos)
      << error_of(j);
  j = healthy_json();
  j["nodes"][4]["ports"][0]["counters"]["SymbolErrors"] = 1;
  EXPECT_NE(error_of(j).find("counters.SymbolErrors' is no counter"), std::string::npos) << error_of(j);
  j = healthy_json();
  j["nodes"][4]["ports"][0]["counters"]["PortXmitData"] = -1;
  EXPECT_NE(error_of(j).find("counters.PortXmitData' is -1"), std::string::npos) << error_of(j);
}

TEST(FabricJson, PortsNumberedOtherwiseThanTheModelSaysAreRefused) {
  json j = healthy_json();
  j["nodes"][0]["ports"].erase(0);  // a switch without its port 0
  EXPECT_NE(error_of(j).find("field 'nodes[0].ports' has 8 entries; a switch with num_ports 8 has 9 (ports 0..8)"),
            std::string::npos)
      << error_of(j);
  j = healthy_json();
  j["nodes"][4]["ports"][0]["number"] = 0;  // an HCA's first entry is port 1
  EXPECT_NE(error_of(j).find("field 'nodes[4].ports[0].number' is 0; this entry is port 1"), std::string::npos)
      << error_of(j);
}

TEST(FabricJson, RemoteEndOutOfBoundsIsRefused) {
  json j = healthy_json();
  j["nodes"][4]["ports"][0]["remote_node"] = 8;
  EXPECT_NE(error_of(j).find("field 'nodes[4].ports[0].remote_node' is 8, not -1 or a node index below 8"),
            std::string::npos)
      << error_of(j);
  j = healthy_json();
  j["nodes"][4]["ports"][0]["remote_port"] = 9;
  EXPECT_NE(error_of(j).find("remote_port' is 9, a port node 2 does not have"), std::string::npos) << error_of(j);
}

TEST(FabricJson, RemoteEndsThatDisagreeAreRefused) {
  json j = healthy_json();
  // hca1 says leaf1:2 (leaf1 says hca2 there); leaf1:1 still says hca1:1. The first port met
  // whose other end disagrees is named.
  j["nodes"][4]["ports"][0]["remote_port"] = 2;
  EXPECT_NE(error_of(j).find("field 'nodes[2].ports[1]' says it is linked to node 4 port 1, which says it is "
                             "linked to node 2 port 2"),
            std::string::npos)
      << error_of(j);
}

TEST(FabricJson, LinksThatDisagreeWithThePortsAreRefused) {
  json j = healthy_json();
  j["links"].erase(0);
  EXPECT_NE(error_of(j).find("field 'links' does not list the links"), std::string::npos) << error_of(j);
}

TEST(FabricJson, SmNodeOutOfBoundsIsRefused) {
  json j = healthy_json();
  j["sms"][1]["node"] = 99;
  EXPECT_NE(error_of(j).find("field 'sms[1].node' is 99"), std::string::npos) << error_of(j);
}

TEST(FabricJson, LoadNamesTheFile) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "fabric_json_load";
  std::filesystem::create_directories(dir);
  const auto bad = (dir / "bad.json").string();
  std::ofstream(bad) << "{\"schema\": \"fabscope.fabric\"";
  try {
    (void)load_subnet(bad);
    FAIL() << "read a truncated file";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(bad + ": not JSON", 0), 0u) << e.what();
  }
  const auto good = (dir / "good.json").string();
  std::ofstream(good) << to_json(healthy_fabric()).dump();
  EXPECT_EQ(load_subnet(good).nodes.size(), 8u);
}

TEST(FabricJson, ForwardingTableRoundTripsAsLowercaseHex) {
  Subnet s = healthy_fabric();
  s.nodes[kLeaf.leaf1].lft = {0xff, 7, 8, 0, 0xab, 0xff};
  const json j = to_json(s);
  EXPECT_EQ(j["nodes"][kLeaf.leaf1]["lft"], "ff070800abff");
  EXPECT_FALSE(j["nodes"][kLeaf.leaf2].contains("lft"));  // not read: no field
  EXPECT_FALSE(j["nodes"][kLeaf.hca1].contains("lft"));
  const Subnet back = subnet_from_json(j);
  EXPECT_EQ(back.nodes[kLeaf.leaf1].lft, s.nodes[kLeaf.leaf1].lft);
  EXPECT_TRUE(back.nodes[kLeaf.leaf2].lft.empty());
  EXPECT_EQ(to_json(back), j);
  // The streaming writer writes the same document.
  std::ostringstream text;
  write_json(text, s, to_json_without_nodes(s));
  EXPECT_EQ(json::parse(text.str()), j);
}

TEST(FabricJson, ForwardingTableReadsUppercaseAndAFullTable) {
  json j = healthy_json();
  j["nodes"][kLeaf.leaf1]["lft"] = "FF0A";
  EXPECT_EQ(subnet_from_json(j).nodes[kLeaf.leaf1].lft, (std::vector<std::uint8_t>{0xff, 0x0a}));
  j["nodes"][kLeaf.leaf1]["lft"] = std::string(2 * 49152, 'f');  // every unicast LID
  EXPECT_EQ(subnet_from_json(j).nodes[kLeaf.leaf1].lft.size(), 49152u);
}

TEST(FabricJson, BadForwardingTablesAreRefusedNamingNodeAndField) {
  json j = healthy_json();
  j["nodes"][2]["lft"] = json::array({1, 2});
  EXPECT_EQ(error_of(j), "field 'nodes[2].lft' is [1,2], not a string of hex digits");
  j["nodes"][2]["lft"] = "ff0";
  EXPECT_EQ(error_of(j), "field 'nodes[2].lft' has 3 hex digits, not two per LID");
  j["nodes"][2]["lft"] = "ff07zz";
  EXPECT_EQ(error_of(j), "field 'nodes[2].lft' has \"zz\" at LID 2 (characters 4-5), not two hex digits");
  j["nodes"][2]["lft"] = "0x07";
  EXPECT_EQ(error_of(j), "field 'nodes[2].lft' has \"0x\" at LID 0 (characters 0-1), not two hex digits");
  j["nodes"][2]["lft"] = std::string("ff\n7", 4);
  EXPECT_EQ(error_of(j), "field 'nodes[2].lft' has \"\\x0a7\" at LID 1 (characters 2-3), not two hex digits");
  j["nodes"][2]["lft"] = std::string(2 * 49153, '0');
  EXPECT_EQ(error_of(j), "field 'nodes[2].lft' has 49153 entries, more than the 49152 unicast LIDs");
  j = healthy_json();
  j["nodes"][4]["lft"] = "ff01";
  EXPECT_EQ(error_of(j), "field 'nodes[4].lft' is set on a node of type hca; only switches forward");
}
