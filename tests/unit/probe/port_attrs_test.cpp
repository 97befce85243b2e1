// The RDMA port parsers shared by the probe and the exporter: values and the one wording of
// their notes (the exporter logs these texts; a change here is a change of its output).
#include "probe/port_attrs.hpp"

#include <gtest/gtest.h>

#include "probe/read_util.hpp"

using namespace fabscope;
using probe::Note;
using probe::NoteKind;

namespace {

const std::string kPort = "sys/class/infiniband/mlx5_0/ports/1";

struct Notes {
  std::vector<Note> list;
  probe::NoteSink sink{list};
};

}  // namespace

TEST(PortAttrs, PortStateNamesItsCodeOrIsNotedOnce) {
  Notes n;
  auto s = probe::parse_port_state(kPort + "/state", "4: ACTIVE", n.sink);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->code, 4);
  EXPECT_EQ(s->name, "ACTIVE");
  EXPECT_FALSE(probe::parse_port_state(kPort + "/state", "4: ACT", n.sink));
  ASSERT_EQ(n.list.size(), 1u);
  EXPECT_EQ(n.list[0].file, kPort + "/state");
  EXPECT_EQ(n.list[0].kind, NoteKind::BadValue);
  EXPECT_EQ(n.list[0].text(), kPort + "/state: not a port state: '4: ACT'");
}

TEST(PortAttrs, PhysStateWithAPortStateNameIsNotAPhysicalState) {
  // The procfs capture's mlx5_0 phys_state reads "4: ACTIVE"; code 4 is PortConfigurationTraining.
  Notes n;
  EXPECT_EQ(probe::parse_phys_state(kPort + "/phys_state", "5: LinkUp", n.sink)->name, "LinkUp");
  EXPECT_FALSE(probe::parse_phys_state(kPort + "/phys_state", "4: ACTIVE", n.sink));
  ASSERT_EQ(n.list.size(), 1u);
  EXPECT_EQ(n.list[0].text(), kPort + "/phys_state: not a physical state: '4: ACTIVE'");
}

TEST(PortAttrs, RateIsGbpsOrNoted) {
  Notes n;
  EXPECT_EQ(probe::parse_rate(kPort + "/rate", "400 Gb/sec (4X NDR)", n.sink), 400.0);
  EXPECT_FALSE(probe::parse_rate(kPort + "/rate", "fast", n.sink));
  ASSERT_EQ(n.list.size(), 1u);
  EXPECT_EQ(n.list[0].text(), kPort + "/rate: not a rate: 'fast'");
}

TEST(PortAttrs, LinkLayerIsOneOfTwoOrNoted) {
  Notes n;
  EXPECT_EQ(probe::parse_link_layer(kPort + "/link_layer", "Ethernet", n.sink), "Ethernet");
  EXPECT_EQ(probe::parse_link_layer(kPort + "/link_layer", "InfiniBand", n.sink), "InfiniBand");
  EXPECT_FALSE(probe::parse_link_layer(kPort + "/link_layer", "OmniPath", n.sink));
  ASSERT_EQ(n.list.size(), 1u);
  EXPECT_EQ(n.list[0].text(), kPort + "/link_layer: unknown link layer 'OmniPath'");
}

TEST(PortAttrs, DataCountersAreWordsScaledToBytesOnlyWhereAsked) {
  Notes n;
  const auto f = kPort + "/counters/port_xmit_data";
  EXPECT_EQ(probe::parse_counter(f, "port_xmit_data", "10", true, n.sink), 40u);
  EXPECT_EQ(probe::parse_counter(f, "port_xmit_data", "10", false, n.sink), 10u);
  EXPECT_EQ(probe::parse_counter(f, "symbol_error", "10", true, n.sink), 10u);
  EXPECT_EQ(probe::parse_counter(f, "port_rcv_data", "0x10", true, n.sink), 64u);
  EXPECT_TRUE(n.list.empty());
}

TEST(PortAttrs, CounterGarbageAndOverflowAreOneNotePerFile) {
  Notes n;
  const auto f = kPort + "/counters/symbol_error";
  EXPECT_FALSE(probe::parse_counter(f, "symbol_error", "N/A (no PMA)", true, n.sink));
  EXPECT_FALSE(probe::parse_counter(kPort + "/counters/port_rcv_data", "port_rcv_data", "18446744073709551615",
                                    true, n.sink));
  EXPECT_EQ(probe::parse_counter(kPort + "/hw_counters/x", "port_rcv_data", "18446744073709551615", false, n.sink),
            UINT64_MAX);
  ASSERT_EQ(n.list.size(), 2u);
  EXPECT_EQ(n.list[0].text(), f + ": not a number: 'N/A (no PMA)'");
  EXPECT_EQ(n.list[1].text(), kPort + "/counters/port_rcv_data: too large to count in bytes: '18446744073709551615'");
}

TEST(PortAttrs, NotesQuoteControlBytesAndCutLongValues) {
  Notes n;
  probe::parse_rate(kPort + "/rate", std::string("1\x1b[31m\n2"), n.sink);
  probe::parse_rate(kPort + "/rate", std::string(50, 'x'), n.sink);
  ASSERT_EQ(n.list.size(), 2u);
  EXPECT_EQ(n.list[0].detail, "not a rate: '1?[31m\\n2'");
  EXPECT_EQ(n.list[1].detail, "not a rate: '" + std::string(40, 'x') + "...'");
}

TEST(PortAttrs, NoteSinkKeepsOrderAsTextOrTyped) {
  std::vector<std::string> texts;
  probe::NoteSink sink(texts);
  sink.add("a", NoteKind::Missing, "missing");
  sink.add("b", NoteKind::Removed, "removed while being read, skipped");
  EXPECT_EQ(texts, (std::vector<std::string>{"a: missing", "b: removed while being read, skipped"}));
  EXPECT_STREQ(probe::to_string(NoteKind::NotText), "not_text");
  EXPECT_STREQ(probe::to_string(NoteKind::BadValue), "bad_value");
}
