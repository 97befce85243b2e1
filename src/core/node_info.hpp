#pragma once
// NodeInfo: everything `fabscope probe` learns about one node, as plain values.
// Unknown facts are std::nullopt (JSON null) or empty strings, never invented defaults.
// JSON keys are stable and documented in docs/formats.md (schema "fabscope.node", version 1).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "core/node_network.hpp"
#include "core/verbs_info.hpp"

namespace fabscope {

struct GidEntry {
  int index = 0;
  std::string gid;     // "fe80:0000:0000:0000:...". All-zero entries are not listed.
  std::string type;    // "IB/RoCE v1" | "RoCE v2" | "" (InfiniBand ports have no gid_attrs/types)
  std::string netdev;  // gid_attrs/ndevs/<i> (RoCE only)
  bool ipv4_mapped = false;  // ::ffff:a.b.c.d
};

struct RdmaPort {
  int port = 0;
  std::string state;       // "ACTIVE", "DOWN", "INIT", "ARMED", "ACTIVE_DEFER"; "" unknown
  std::optional<int> state_code;
  std::string phys_state;  // "LinkUp", "Disabled", "Polling", ...; "" unknown
  std::optional<int> phys_state_code;
  std::string rate;        // as the kernel writes it: "100 Gb/sec (4X EDR)"
  std::optional<double> rate_gbps;
  std::string link_layer;  // "InfiniBand" | "Ethernet" | ""
  std::optional<std::uint32_t> lid;
  std::optional<std::uint32_t> sm_lid;
  std::optional<int> active_mtu;  // bytes, where exposed (hw MTU of the port), else from netdev
  std::string netdev;             // the netdev this port carries (RoCE, IPoIB), "" if none
  std::vector<GidEntry> gids;
  std::map<std::string, std::uint64_t> counters;     // counters/*; *_data in BYTES (kernel: 4-byte words)
  std::map<std::string, std::uint64_t> hw_counters;  // hw_counters/*
};

struct RdmaDevice {
  std::string name;  // "mlx5_0"
  std::string hca_type;
  std::string fw_ver;
  std::string board_id;
  std::string node_guid;
  std::string node_type;  // "1: CA"
  std::string pci_address;  // "0000:17:00.0", "" for software devices (rxe)
  std::optional<int> numa_node;
  std::vector<RdmaPort> ports;
};

// "mlx5_0:1", the name findings, plans and tables give a port.
std::string port_name(const RdmaDevice& dev, const RdmaPort& port);

struct Netdev {
  std::string name;
  std::optional<int> mtu;
  std::string operstate;  // "up", "down", "unknown", ...
  std::optional<std::int64_t> speed_mbps;  // null when the kernel reports -1 / unknown
  std::optional<int> type;                 // ARPHRD: 1 ether, 32 infiniband, 772 loopback
  std::string address;
  std::string pci_address;                 // backing PCI function, "" for virtual devices
  bool is_virtual = false;                 // under /sys/devices/virtual
  std::vector<std::string> rdma_ports;     // "mlx5_0:1"
  std::vector<std::string> ipv4;           // only live (getifaddrs); empty on fixtures
  // The switch ports this netdev is cabled to (normally one), from lldpd; live only, empty when
  // none or unknown (NodeInfo::lldp says which).
  std::vector<LldpNeighbor> lldp_neighbors;
};

struct PciDevice {
  std::string address;  // "0000:17:00.0"
  std::optional<std::uint32_t> class_code;  // 0x030200
  std::string vendor;   // "0x10de"
  std::string device;   // "0x2330"
  std::string driver;   // bound driver name, "" if none
  std::optional<int> numa_node;  // null when unknown or -1
  std::optional<double> current_link_speed_gts;
  std::optional<double> max_link_speed_gts;
  std::optional<int> current_link_width;
  std::optional<int> max_link_width;
  // SR-IOV: sriov_numvfs / sriov_totalvfs on a physical function (null elsewhere); physfn is the
  // PF's address on a virtual function ("" elsewhere).
  std::optional<int> sriov_numvfs;
  std::optional<int> sriov_totalvfs;
  std::string physfn;
  std::vector<std::string> upstream;  // bridge chain from root port down to the parent, addresses
  std::string root_complex;           // "pci0000:00"
  bool is_bridge = false;
  std::optional<bool> acs_enabled;    // bridges only, when config space was readable
  std::optional<std::uint16_t> acs_ctrl;
};

// One NVLink of a GPU as NVML answers it (probe/nvlink.cpp). A value the driver did not give
// (NVML_ERROR_NOT_SUPPORTED and the like) is null or "".
struct NvLink {
  int link = 0;                        // NVML's link index, 0..17
  std::optional<bool> active;          // nvmlDeviceGetNvLinkState
  std::optional<int> version_code;     // nvmlDeviceGetNvLinkVersion: 4 = NVLink 3.0, 6 = 4.0, 7 = 5.0
  std::string remote_type;             // "gpu" | "switch" | "ibmnpu" | "unknown"; "" unread
  std::string remote_pci_address;      // the GPU at the other end, "0000:07:00.0"; "" for a switch
  // nvmlDeviceGetNvLinkErrorCounter: DL replay, DL recovery, DL CRC flit ("CRC Errors" of
  // nvidia-smi nvlink -e), DL CRC data, DL ECC data.
  std::optional<std::uint64_t> replay_errors, recovery_errors, crc_flit_errors, crc_data_errors,
      ecc_data_errors;
  // NVML field values 138/139 scoped to this link (NVLINK_THROUGHPUT_DATA_TX/RX, KiB), in bytes.
  std::optional<std::uint64_t> data_transmitted_bytes, data_received_bytes;
};

struct Gpu {
  int index = 0;
  std::string pci_address;
  std::string name;  // from NVML, or "" when only PCI was seen
  std::string uuid;
  std::optional<int> numa_node;
  std::optional<int> nvlink_total;   // links present (NVML)
  std::optional<int> nvlink_active;  // links up (NVML)
  std::string source;                // "pci" | "nvml"
  std::vector<NvLink> nvlinks;       // the links NVML answers for (live or replayed), else empty
  // NVML field values 138-141 over all links (THROUGHPUT_DATA_TX/RX: payload; RAW_TX/RX: with
  // protocol overhead), KiB in NVML, bytes here.
  std::optional<std::uint64_t> nvlink_data_transmitted_bytes, nvlink_data_received_bytes,
      nvlink_raw_transmitted_bytes, nvlink_raw_received_bytes;
};

// How two GPUs reach each other, as `nvidia-smi topo -m` prints it: "NV18" (18 NVLinks, direct
// or through NVSwitches), else the PCIe path "PIX" | "PXB" | "PHB" | "NODE" | "SYS"; "" unknown.
struct GpuPair {
  std::string gpu_a, gpu_b;  // PCI addresses, a before b in GPU order
  std::string level;
  std::optional<int> nvlinks;  // NVLinks joining them (NVML), null when NVML did not tell
  std::string source;          // "nvml" (links, NVML's common ancestor) | "pci" (sysfs path)
  // nvmlDeviceGetP2PStatus from a to b: "ok" or NVML's reason ("disabled_by_regkey",
  // "not_supported", "chipset_not_supported", "gpu_not_supported", "topology_not_supported",
  // "unknown"); "" unread.
  std::string p2p_read, p2p_write, p2p_nvlink, p2p_atomics;
};

// GPU <-> NIC distance, classified like `nvidia-smi topo -m`.
struct Affinity {
  std::string gpu;    // PCI address
  std::string nic;    // RDMA device name (or netdev name when no RDMA device)
  std::string level;  // "PIX" | "PXB" | "PHB" | "NODE" | "SYS" | "" unknown
};

struct KernelInfo {
  std::string release;  // proc/sys/kernel/osrelease
  std::vector<std::string> modules;  // names from proc/modules
  std::string cmdline;
  std::map<std::string, std::string> sysctls;  // "net.core.rmem_max" -> "212992"
  // memlock from proc/self/limits: nullopt unknown; UINT64_MAX means unlimited.
  std::optional<std::uint64_t> memlock_soft_bytes;
  std::optional<std::uint64_t> memlock_hard_bytes;
};

struct Versions {
  std::string nvidia_driver;  // "580.159.04"
  std::string nccl;           // "2.27.3"
  std::optional<int> nccl_code;  // ncclGetVersion(): 22703
  std::string cuda_driver;    // "13.0" (cuDriverGetVersion / NVML)
  std::string cuda_runtime;   // "13.0"
};

struct NodeInfo {
  static constexpr int kSchemaVersion = 1;
  std::string hostname;
  std::string root;  // the --root used
  std::vector<RdmaDevice> rdma_devices;
  std::vector<Netdev> netdevs;
  std::vector<PciDevice> pci_devices;
  std::vector<Gpu> gpus;
  std::vector<Affinity> gpu_nic_affinity;
  std::vector<GpuPair> gpu_topology;  // every pair of GPUs, a.index < b.index
  KernelInfo kernel;
  Versions versions;
  std::vector<LosslessState> lossless;  // one per netdev carrying an Ethernet RDMA port
  std::vector<Bond> bonds;
  std::vector<NicIrqs> nic_irqs;         // one per NIC PCI function (netdev or RDMA device)
  std::vector<NumaNode> numa_nodes;
  Firewall firewall;
  LldpState lldp;  // whether Netdev::lldp_neighbors were read
  std::vector<std::string> probe_notes;  // what could not be read, and why (never fatal)
  std::optional<VerbsInfo> verbs;  // live only (libibverbs); null when not queried

  const RdmaDevice* find_rdma(const std::string& name) const;
  const Netdev* find_netdev(const std::string& name) const;
  const PciDevice* find_pci(const std::string& address) const;
  bool has_module(const std::string& name) const;
};

constexpr std::uint64_t kUnlimited = UINT64_MAX;

void to_json(json& j, const GidEntry& v);
void from_json(const json& j, GidEntry& v);
void to_json(json& j, const RdmaPort& v);
void from_json(const json& j, RdmaPort& v);
void to_json(json& j, const RdmaDevice& v);
void from_json(const json& j, RdmaDevice& v);
void to_json(json& j, const Netdev& v);
void from_json(const json& j, Netdev& v);
void to_json(json& j, const PciDevice& v);
void from_json(const json& j, PciDevice& v);
void to_json(json& j, const Gpu& v);
void from_json(const json& j, Gpu& v);
void to_json(json& j, const NvLink& v);
void from_json(const json& j, NvLink& v);
void to_json(json& j, const GpuPair& v);
void from_json(const json& j, GpuPair& v);
void to_json(json& j, const Affinity& v);
void from_json(const json& j, Affinity& v);
void to_json(json& j, const KernelInfo& v);
void from_json(const json& j, KernelInfo& v);
void to_json(json& j, const Versions& v);
void from_json(const json& j, Versions& v);
// NodeInfo JSON carries "schema": "fabscope.node" and "schema_version".
void to_json(json& j, const NodeInfo& v);
void from_json(const json& j, NodeInfo& v);

}  // namespace fabscope
