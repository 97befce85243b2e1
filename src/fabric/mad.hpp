#pragma once
// Management datagrams as bytes: building the requests the sweep sends and decoding the
// attributes it reads (IBA vol. 1, chapters 13, 14 and 16). Pure functions, no library: bytes in,
// model fields out. Every decoder checks the length it is given and throws fabscope::Error naming
// the attribute when it is short; within the length, every bit pattern decodes to something (an
// unknown code becomes the model's Unknown).
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "fabric/model.hpp"

namespace fabscope::fabric::mad {

constexpr std::size_t kMadSize = 256;
constexpr std::size_t kSmpDataOffset = 64;   // SMP attribute data (64 bytes)
constexpr std::size_t kSmpDataSize = 64;
constexpr std::size_t kPmaDataOffset = 64;   // GMP (PerfMgt) attribute data (192 bytes)
constexpr std::size_t kPmaDataSize = 192;

enum MgmtClass : std::uint8_t { SmpLid = 0x01, SmpDirected = 0x81, PerfMgt = 0x04 };
enum Method : std::uint8_t { Get = 0x01, GetResp = 0x81 };
enum Attr : std::uint16_t {
  ClassPortInfo = 0x0001,
  NodeDesc = 0x0010,
  NodeInfo = 0x0011,
  SwitchInfo = 0x0012,             // SMP (the PerfMgt attribute 0x0012 is PortCounters)
  PortInfo = 0x0015,
  LinearForwardingTable = 0x0019,
  SMInfo = 0x0020,
  PortCounters = 0x0012,           // PerfMgt
  PortCountersExtended = 0x001D,   // PerfMgt
};

// PortInfo.CapabilityMask bits.
constexpr std::uint32_t kCapIsSM = 1u << 1;
constexpr std::uint32_t kCapExtendedSpeeds = 1u << 14;
// PerfMgt ClassPortInfo.CapabilityMask bits.
constexpr std::uint16_t kPmaAllPortSelect = 1u << 8;
constexpr std::uint16_t kPmaExtWidth = 1u << 9;          // PortCountersExtended supported
constexpr std::uint16_t kPmaExtWidthNoIetf = 1u << 10;   // ... without the IETF counters
constexpr std::uint16_t kPmaXmitWait = 1u << 12;         // PortCounters carries PortXmitWait

// The common MAD header (first 24 bytes).
struct Header {
  std::uint8_t base_version = 0, mgmt_class = 0, class_version = 0, method = 0;
  std::uint16_t status = 0;        // for a directed-route SMP: the D bit is in it (bit 15)
  std::uint64_t tid = 0;
  std::uint16_t attr_id = 0;
  std::uint32_t attr_mod = 0;
};
Header decode_header(std::span<const std::uint8_t> mad);

// A PerfMgt Get for attr (ClassPortInfo, PortCounters, PortCountersExtended) with PortSelect
// port (ignored for ClassPortInfo), LID-routed to the node's LID by the caller.
std::array<std::uint8_t, kMadSize> pma_get(std::uint16_t attr, int port, std::uint64_t tid);
// A directed-route SMP Get: path is the initial path, one output port per hop ({} for the local
// node; at most 63 hops).
std::array<std::uint8_t, kMadSize> smp_dr_get(std::uint16_t attr, std::uint32_t mod, std::uint64_t tid,
                                              const std::vector<std::uint8_t>& path);
// "0,1,31" (Node::dr_path, ibnetdiscover's form, the leading 0 is the local node) to the
// list of hops {1, 31}; throws Error on anything else.
std::vector<std::uint8_t> parse_dr_path(const std::string& s);

// The attribute data of a response (after the header), checked to be at least `need` bytes.
std::span<const std::uint8_t> smp_data(std::span<const std::uint8_t> mad);
std::span<const std::uint8_t> pma_data(std::span<const std::uint8_t> mad);

// Attributes. Each takes the attribute data (SMP: 64 bytes, PMA: 192 bytes; fewer is an Error).
struct NodeInfoFields {
  NodeType type = NodeType::Unknown;
  int num_ports = 0;
  std::uint64_t system_guid = 0, node_guid = 0, port_guid = 0;
  std::uint16_t device_id = 0;
  std::uint32_t revision = 0;
  int local_port = 0;
  std::uint32_t vendor_id = 0;
};
NodeInfoFields decode_node_info(std::span<const std::uint8_t> data);
// NodeDescription: up to 64 bytes of UTF-8, NUL-terminated or padded; control characters become '?'.
std::string decode_node_desc(std::span<const std::uint8_t> data);
// The extended speeds (FDR and later) count when the capability mask says so: a switch's external
// ports carry no mask of their own, so the sweep passes port 0's; nullopt uses this data's own.
fabric::PortInfo decode_port_info(std::span<const std::uint8_t> data,
                                  std::optional<std::uint32_t> cap_mask = std::nullopt);
SmInfo decode_sm_info(std::span<const std::uint8_t> data);
// SwitchInfo (IBA 14.2.5.4): the sizes of the forwarding tables and the switch's defaults.
struct SwitchInfoFields {
  std::uint16_t linear_fdb_cap = 0;     // LinearForwardingTable entries the switch has
  std::uint16_t random_fdb_cap = 0;
  std::uint16_t mcast_fdb_cap = 0;
  std::uint16_t linear_fdb_top = 0;     // highest LID with a valid entry (the SM sets it)
  int default_port = 0;
  int life_time = 0;                    // LifeTimeValue, 5 bits
  bool port_state_change = false;
  std::uint16_t lids_per_port = 0;
  std::uint16_t partition_enforcement_cap = 0;
  bool enhanced_port0 = false;
  std::uint16_t mcast_fdb_top = 0;
};
SwitchInfoFields decode_switch_info(std::span<const std::uint8_t> data);
// LinearForwardingTable block: 64 output ports, entry i for LID block*64 + i.
std::array<std::uint8_t, 64> decode_lft_block(std::span<const std::uint8_t> data);
// PerfMgt ClassPortInfo: the capability mask (kPma* bits).
std::uint16_t decode_pma_capability(std::span<const std::uint8_t> data);
// PortCounters into c (error counters, 32-bit data counters; PortXmitWait when xmit_wait).
void decode_port_counters(std::span<const std::uint8_t> data, bool xmit_wait, Counters& c);
// PortCountersExtended: the four 64-bit data counters replace the 32-bit ones; c.extended = true.
void decode_port_counters_ext(std::span<const std::uint8_t> data, Counters& c);
// PortSelect of a PortCounters/PortCountersExtended response, to match it to its port.
int decode_port_select(std::span<const std::uint8_t> data);

}  // namespace fabscope::fabric::mad
