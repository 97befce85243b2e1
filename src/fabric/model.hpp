#pragma once
// The InfiniBand subnet as plain values: nodes (switches, HCAs, routers) with their ports, each
// port's decoded PortInfo and counters, the links between ports, the subnet managers. What the
// sweep (sweep.hpp) collects through the management libraries, what `fabscope fabric --save`
// writes and `--expect`/`--from` read back (the "fabscope.fabric" schema, docs/formats.md), and
// what the judgements (judge.hpp) read. Nodes and ports refer to each other by index, never by
// pointer, so a Subnet copies, compares and serialises as a value.
//
// Not to be confused with core/node_network.hpp: that is one node's own network facts (DCB,
// bonds, IRQs) read from its sysfs; this is the subnet between the nodes, read with MADs.
#include <array>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"

namespace fabscope::fabric {

enum class NodeType { Unknown = 0, Hca = 1, Switch = 2, Router = 3 };  // NodeInfo.NodeType
const char* to_string(NodeType t);                                     // "hca", "switch", ...

// PortInfo.PortState (IBA 14.2.5.6): 0 means "no state change" and is shown as unknown.
enum class PortState { Unknown = 0, Down = 1, Init = 2, Armed = 3, Active = 4 };
// PortInfo.PortPhysicalState.
enum class PhysState {
  Unknown = 0, Sleep = 1, Polling = 2, Disabled = 3, Training = 4, LinkUp = 5, ErrorRecovery = 6, PhyTest = 7
};
const char* to_string(PortState s);   // "Down", "Init", "Armed", "Active", "?"
const char* to_string(PhysState s);   // "Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp", ...

// Lane speeds in one enum across PortInfo's three encodings (LinkSpeedActive, LinkSpeedExtActive,
// and FDR10 from the Mellanox extended PortInfo): the order is the generation order.
enum class Speed { Unknown = 0, SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR };
const char* to_string(Speed s);       // "SDR", ..., "?"
double lane_gbps(Speed s);            // signalling rate of one lane: SDR 2.5 ... HDR 53.125, NDR 106.25
double lane_data_gbps(Speed s);       // data rate of one lane, the kernel's `rate` file's: ... HDR 50, NDR 100
// Bit (1u << static_cast<int>(Speed)) in a SpeedMask.
using SpeedMask = std::uint32_t;
constexpr SpeedMask speed_bit(Speed s) { return 1u << static_cast<unsigned>(s); }
Speed fastest(SpeedMask m);           // Unknown when empty

// Widths as lane counts: 1, 2, 4, 8, 12. A WidthMask has bit (1u << lanes).
using WidthMask = std::uint32_t;
constexpr WidthMask width_bit(int lanes) { return 1u << static_cast<unsigned>(lanes); }
int widest(WidthMask m);              // 0 when empty

// What PortInfo says of one port, decoded. For a switch, only port 0 carries LID, LMC and the
// capability mask; its external ports carry the link fields.
struct PortInfo {
  PortState state = PortState::Unknown;
  PhysState phys_state = PhysState::Unknown;
  int width_active = 0;                // lanes; 0 when the link is down or unknown
  WidthMask width_enabled = 0, width_supported = 0;
  Speed speed_active = Speed::Unknown;
  SpeedMask speed_enabled = 0, speed_supported = 0;
  int mtu_active = 0;                  // bytes: 256 ... 4096; 0 unknown
  int mtu_max = 0;                     // NeighborMTU cap the port supports (MTUCap), bytes
  std::uint16_t lid = 0;               // base LID (HCA ports; switch port 0)
  int lmc = 0;
  std::uint16_t sm_lid = 0;            // MasterSMLID this port knows
  std::uint32_t capability_mask = 0;   // PortInfo.CapabilityMask (bit 1: IsSM)
  int link_down_default = 0;
};

// Port counters, in one array indexed by Counter. PortCounters (attribute 0x12) gives every
// error counter at its narrow width and the four data counters at 32 bits; PortCountersExtended
// (0x1D) gives the data counters at 64 bits where ClassPortInfo says so. Bytes counters hold
// what the MAD holds: 4-byte words (IBA 16.1.3.5), like ibqueryerrors and perfquery print.
enum class Counter {
  SymbolErrorCounter, LinkErrorRecoveryCounter, LinkDownedCounter, PortRcvErrors,
  PortRcvRemotePhysicalErrors, PortRcvSwitchRelayErrors, PortXmitDiscards, PortXmitConstraintErrors,
  PortRcvConstraintErrors, LocalLinkIntegrityErrors, ExcessiveBufferOverrunErrors, VL15Dropped,
  PortXmitWait,  // ticks the port had data to send but no credit (congestion)
  PortXmitData, PortRcvData, PortXmitPkts, PortRcvPkts,
  Count
};
constexpr int kCounterCount = static_cast<int>(Counter::Count);
const char* counter_name(Counter c);          // the IBA/ibqueryerrors name, "SymbolErrorCounter"
std::optional<Counter> counter_from_name(const std::string& name);
int counter_bits(Counter c, bool extended);   // width of the counter as read (saturates at 2^bits-1)
bool is_error_counter(Counter c);             // the counters ibqueryerrors judges (not data, not XmitWait)

struct Counters {
  std::array<std::optional<std::uint64_t>, kCounterCount> value{};  // nullopt: not read
  bool extended = false;                       // data counters are the 64-bit extended ones
  std::optional<std::uint64_t>& operator[](Counter c) { return value[static_cast<std::size_t>(c)]; }
  const std::optional<std::uint64_t>& operator[](Counter c) const { return value[static_cast<std::size_t>(c)]; }
  bool saturated(Counter c) const;             // value == 2^bits - 1
};

struct Port {
  int number = 0;                       // 0 is a switch's management port
  std::uint64_t guid = 0;               // port GUID (HCA ports); a switch's ports share the node's
  std::optional<PortInfo> info;         // nullopt: PortInfo not read (see note)
  std::optional<Counters> counters;     // nullopt: counters not read (see note)
  int remote_node = -1;                 // index into Subnet::nodes; -1 no link
  int remote_port = 0;
  std::string note;                     // why something of this port is missing
};

struct Node {
  NodeType type = NodeType::Unknown;
  std::uint64_t guid = 0;               // node GUID
  std::uint64_t system_guid = 0;
  std::string description;              // NodeDescription, e.g. "leaf03 mlx5_0" or "MF0;sw01:MQM8700/U1"
  std::uint32_t vendor_id = 0;
  std::uint16_t device_id = 0;
  std::uint32_t revision = 0;
  std::string firmware;                 // "" where the fabric does not expose it
  int num_ports = 0;
  std::vector<Port> ports;              // ports[i].number == i for switches (0..num_ports); HCAs 1..num_ports at [i-1]
  std::string dr_path;                  // directed route from the local port, "0,1,31"
  // Switches, when the sweep read routes (SweepOptions::routes): the LinearForwardingTable,
  // index LID -> output port (0 = the switch itself, 0xff = no entry), LIDs 0..LinearFDBTop.
  // Empty: not read.
  std::vector<std::uint8_t> lft;
  std::string note;                     // why something of this node is missing
  const Port* port(int number) const;   // nullptr when absent
  Port* port(int number);
  std::uint16_t lid() const;            // switch: port 0's; HCA: first port with a LID; 0 none
};

// One hop of a route: the node, the port the packet enters by (0 at the source) and the port it
// leaves by (0 at the destination).
struct Hop {
  int node = -1;
  int in_port = 0;
  int out_port = 0;
};

// A cable: both ends. a is the end with the lower (node index, port) pair, so each link is listed
// once.
struct Link {
  int a_node = -1, a_port = 0, b_node = -1, b_port = 0;
};

enum class SmState { NotActive = 0, Discovering = 1, Standby = 2, Master = 3 };
const char* to_string(SmState s);     // "NOTACTIVE", "DISCOVERING", "STANDBY", "MASTER"
struct SmInfo {
  std::uint64_t guid = 0;               // SM's port GUID
  std::uint16_t lid = 0;
  int priority = 0;
  SmState state = SmState::NotActive;
  std::uint32_t act_count = 0;
  int node = -1;                        // index into nodes when known
};

// A GUID as the diag tools print it: "0x" and 16 hex digits.
std::string guid_hex(std::uint64_t guid);
// "0x0002c90300a1b2c3", the kernel's "0002:c903:00a1:b2c3" or bare hex -> the GUID; 0 unparsable.
std::uint64_t parse_guid(std::string text);

struct Subnet {
  std::string source;                   // "mlx5_0:1" (the local port the sweep ran from), or a file
  std::string swept_at;                 // ISO 8601 UTC
  double sweep_s = 0;                   // wall time of the sweep
  std::vector<Node> nodes;
  std::vector<Link> links;              // derived from ports' remote ends (rebuild_links)
  std::vector<SmInfo> sms;
  std::vector<std::string> notes;       // sweep-wide: nodes that did not answer, libraries absent
  // MADs fabscope's engine sent for this collection (discovery, SMInfo, counters, forwarding
  // tables; retries included) and requests left unanswered after every retry. Not saved in the
  // JSON (a property of one collection).
  std::uint64_t mads_sent = 0, mads_timed_out = 0;
  void rebuild_links();
  int find_guid(std::uint64_t node_guid) const;   // node index or -1
  int find_lid(std::uint16_t lid) const;          // node index owning the LID (LMC ranges included) or -1
  // "S-leaf1"-style name for humans: the description, else guid_hex of the GUID.
  std::string name(int node) const;
};

// JSON: the "fabscope.fabric" schema, version 1. from_json checks every field (types, ranges,
// indexes in bounds, ports numbered as said above) and throws fabscope::Error naming the place.
json to_json(const Subnet& s);
// to_json(s) without "nodes", and the writer that streams the nodes into such a document (doc
// may carry more keys: fabric_json's): the text of dump_json(to_json(s)) without holding every
// node's JSON at once (a 2,144-node fabric's tree took about 80 MiB).
json to_json_without_nodes(const Subnet& s);
void write_json(std::ostream& out, const Subnet& s, const json& doc);
Subnet subnet_from_json(const json& j);
constexpr int kFabricSchemaVersion = 1;
// A saved sweep (`fabscope fabric --save`/`--json`; "-" is stdin), read whole and checked by
// subnet_from_json; every error message starts with the path.
Subnet load_subnet(const std::string& path);

}  // namespace fabscope::fabric
