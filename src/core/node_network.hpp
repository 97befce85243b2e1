#pragma once
// Node facts beyond ports and PCI: lossless-RoCE settings (DCB, ECN), bonds, NIC interrupts,
// NUMA CPU lists, the firewall ruleset and LLDP neighbours. Plain values like the rest of NodeInfo; unknown is
// std::nullopt or an empty string with the reason in a *_note field, never a guessed default.
// JSON keys are documented in docs/formats.md (schema "fabscope.node").
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"

namespace fabscope {

// One DCB application-priority entry (struct dcb_app, include/uapi/linux/dcbnl.h).
struct DcbApp {
  int selector = 0;  // IEEE_8021QAZ_APP_SEL_*: 1 ethertype, 2 tcp/sctp port, 3 udp/dccp port, 4 any port, 5 DSCP
  int protocol = 0;  // the ethertype, port or DSCP value
  int priority = 0;  // 802.1p priority 0..7
};

// Lossless RoCE state of one netdev that carries an Ethernet RDMA port.
struct LosslessState {
  std::string netdev;
  std::vector<std::string> rdma_ports;  // "mlx5_0:1"
  // From the kernel's DCB netlink interface (DCB_CMD_IEEE_GET), live nodes only.
  std::optional<std::vector<int>> pfc_priorities;  // priorities with PFC on; [] none; null unknown
  std::optional<int> pfc_capable_tcs;              // ieee_pfc.pfc_cap
  std::vector<DcbApp> apps;                        // IEEE application table
  std::string trust;     // "dscp" (DSCP entries in the app table) | "pcp" | "" unknown
  std::string dcb_note;  // why the DCB values are unknown ("" when read)
  // From the mlx5 sysfs files sys/class/net/IF/ecn/roce_{np,rp}/enable/<prio>.
  std::optional<std::vector<int>> ecn_np_priorities;  // notification point (receiver marks CNPs)
  std::optional<std::vector<int>> ecn_rp_priorities;  // reaction point (sender slows down)
  std::string ecn_note;
};

struct BondSlave {
  std::string name;
  std::string mii_status;  // "up" | "down" | "going back" | ...
  std::optional<std::int64_t> speed_mbps;  // null: "Unknown"
  std::string duplex;
  std::optional<std::uint64_t> link_failure_count;
  std::string permanent_hw_addr;
};

// /proc/net/bonding/<bond> (drivers/net/bonding/bond_procfs.c).
struct Bond {
  std::string name;
  std::string mode;          // "fault-tolerance (active-backup)", "IEEE 802.3ad Dynamic link aggregation", ...
  std::string mii_status;    // of the bond
  std::string active_slave;  // "" when none or not an active-backup-like mode
  std::optional<int> mii_polling_ms;
  std::vector<BondSlave> slaves;
};

struct IrqInfo {
  int irq = 0;
  std::string name;                 // last column of /proc/interrupts: "mlx5_comp3@pci:0000:17:00.0"
  std::vector<int> affinity_cpus;   // effective_affinity_list where present, else smp_affinity_list
  std::string affinity_source;      // "effective_affinity_list" | "smp_affinity_list" | "" unreadable
  std::optional<std::uint64_t> count;  // interrupts served, summed over CPUs
};

// MSI/MSI-X interrupts of one NIC PCI function.
struct NicIrqs {
  std::string pci_address;
  std::vector<std::string> netdevs;       // netdevs on this function
  std::vector<std::string> rdma_devices;  // RDMA devices on this function
  std::optional<int> numa_node;
  std::vector<IrqInfo> irqs;
  std::string note;  // why affinities are unknown ("" when read)
};

struct NumaNode {
  int node = 0;
  std::vector<int> cpus;  // sys/devices/system/node/nodeN/cpulist
};

// One value or range a port match compares with; hi == lo for a single port.
struct PortRange {
  std::uint32_t lo = 0, hi = 0;
};

// One match of a firewall rule, reduced to what decides whether RDMA and NCCL traffic hits it.
struct FirewallMatch {
  // "udp dport" | "tcp dport" | "th dport" | "l4proto" | "other"
  std::string field;
  std::string op;                    // "==" | "!=" (an nft "in" is "==")
  std::vector<PortRange> values;     // ports; protocol numbers for "l4proto"
  bool opaque = false;               // compared with a named set or an expression not understood
  std::string text;                  // as written back, e.g. "udp dport 4791"
};

struct FirewallRule {
  std::uint64_t handle = 0;
  std::string verdict;  // "accept" | "drop" | "reject" | "jump" | "goto" | "return" | "continue" | "" none
  std::string target;   // chain of a jump/goto
  std::vector<FirewallMatch> matches;
  std::string text;     // the rule as nft would print it (approximately): "udp dport 4791 drop"
};

struct FirewallChain {
  std::string family;  // "ip" | "ip6" | "inet" | "netdev" | ...
  std::string table;
  std::string name;
  std::string hook;    // "input" | "output" | "prerouting" | ... ; "" for a regular chain
  std::string type;    // "filter" | "nat" | "route" | ""
  std::optional<int> priority;
  std::string policy;  // "accept" | "drop" | "" (regular chain)
  std::vector<FirewallRule> rules;
};

struct Firewall {
  std::string source;  // "nft" when the ruleset was read; "" unknown
  std::string note;    // why it is unknown, e.g. "nft not found", "not readable as this user"
  std::vector<FirewallChain> chains;
};

// One LLDP neighbour of a netdev (the switch port it is cabled to), as lldpd's client reports it
// (`lldpcli -f json show neighbors details`). "" / empty / nullopt: the neighbour did not send it.
struct LldpNeighbor {
  std::string protocol;         // "LLDP" (lldpd also lists CDP/EDP/FDP/SONMP neighbours when enabled)
  std::string chassis_name;     // System Name TLV: "leaf-a.pod1"
  std::string chassis_id;       // Chassis ID TLV: "e6:f0:a1:88:78:d5"
  std::string chassis_id_type;  // its subtype as lldpcli names it: "mac" | "ifname" | "local" | "ip" | ...
  std::string port_id;          // Port ID TLV: "swp7", "Ethernet1/1"
  std::string port_id_type;     // "ifname" | "mac" | "local" | ...
  std::string port_descr;       // Port Description TLV
  // IEEE 802.3 Maximum Frame Size TLV: the largest frame the switch port takes, Ethernet header
  // and FCS included (an MTU of 9000 needs at least 9018, 9022 with a VLAN tag).
  std::optional<int> mfs_bytes;
  std::vector<int> vlan_ids;               // IEEE 802.1 VLAN Name (and Port VLAN ID) TLVs
  std::optional<int> pvid;                 // the port's untagged VLAN, where sent
  std::vector<std::string> mgmt_addresses;  // Management Address TLVs: "192.0.2.11", "2001:db8::11"
};

// Whether LLDP neighbours were read. source "lldpcli" means lldpd answered, so a netdev with no
// neighbour has none (within lldpd's view); "" means unknown, with the reason in note.
struct LldpState {
  std::string source;
  std::string note;  // "lldpcli not found (lldpd not installed)", "lldpd not running", ...
};

void to_json(json& j, const DcbApp& v);
void from_json(const json& j, DcbApp& v);
void to_json(json& j, const LosslessState& v);
void from_json(const json& j, LosslessState& v);
void to_json(json& j, const BondSlave& v);
void from_json(const json& j, BondSlave& v);
void to_json(json& j, const Bond& v);
void from_json(const json& j, Bond& v);
void to_json(json& j, const IrqInfo& v);
void from_json(const json& j, IrqInfo& v);
void to_json(json& j, const NicIrqs& v);
void from_json(const json& j, NicIrqs& v);
void to_json(json& j, const NumaNode& v);
void from_json(const json& j, NumaNode& v);
void to_json(json& j, const PortRange& v);
void from_json(const json& j, PortRange& v);
void to_json(json& j, const FirewallMatch& v);
void from_json(const json& j, FirewallMatch& v);
void to_json(json& j, const FirewallRule& v);
void from_json(const json& j, FirewallRule& v);
void to_json(json& j, const FirewallChain& v);
void from_json(const json& j, FirewallChain& v);
void to_json(json& j, const Firewall& v);
void from_json(const json& j, Firewall& v);
void to_json(json& j, const LldpNeighbor& v);
void from_json(const json& j, LldpNeighbor& v);
void to_json(json& j, const LldpState& v);
void from_json(const json& j, LldpState& v);

}  // namespace fabscope
