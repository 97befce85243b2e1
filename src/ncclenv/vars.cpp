#include "ncclenv/vars.hpp"

#include <algorithm>
#include <array>

namespace fabscope::ncclenv {

namespace {

using T = VarType;
using C = Category;

// Keep sorted by name (a unit test checks it). Defaults are NCCL's, as documented; "" where
// NCCL decides at run time. Ranges are given only where NCCL or the hardware bounds the value.
const std::vector<VarInfo> kVars = {
    {"NCCL_ALGO", T::List, "", "2.5", C::Debug,
     "restrict collectives to these algorithms (Ring, Tree, CollNet*, NVLS*, PAT); overrides NCCL's tuning"},
    {"NCCL_ALLOC_P2P_NET_LL_BUFFERS", T::Bool, "0", "2.14", C::Tuning,
     "allocate LL-protocol buffers for every network peer, for latency-bound point-to-point traffic"},
    {"NCCL_BUFFSIZE", T::Size, "4194304", "2.2.12", C::Tuning,
     "bytes of buffer per channel and peer for the Simple protocol; larger uses more GPU memory"},
    {"NCCL_CGA_CLUSTER_SIZE", T::Int, "", "2.16", C::Tuning,
     "CUDA thread-block cluster size used by NCCL kernels on Hopper and later", {}, 0, 8},
    {"NCCL_CHECKS_DISABLE", T::Bool, "0", "2.0", C::Debug,
     "skip argument checks on every call (removed in 2.2.12; no effect on newer releases)"},
    {"NCCL_CHECK_POINTERS", T::Bool, "0", "2.2.12", C::Debug,
     "check every buffer pointer on each collective call; costs latency"},
    {"NCCL_COLLNET_ENABLE", T::Bool, "0", "2.6", C::System,
     "use the CollNet (in-network reduction, e.g. SHARP) algorithms when a CollNet plugin is present"},
    {"NCCL_COLLNET_NODE_THRESHOLD", T::Int, "2", "2.9.9", C::Tuning,
     "smallest node count at which CollNet algorithms are considered", {}, 1, {}},
    {"NCCL_COMM_BLOCKING", T::Bool, "", "2.14", C::Debug,
     "make communicator calls blocking (1) or non-blocking (0), overriding ncclConfig_t"},
    {"NCCL_COMM_ID", T::String, "", "2.0", C::System,
     "host:port of the bootstrap root, for launchers that do not pass a unique id themselves"},
    {"NCCL_CONF_FILE", T::String, "", "2.23", C::System,
     "configuration file read instead of ~/.nccl.conf (before /etc/nccl.conf)"},
    {"NCCL_CROSS_NIC", T::Enum, "2", "2.7", C::System,
     "let rings and trees use different NICs on different nodes: 0 never, 1 always, 2 when it helps",
     "0|1|2"},
    {"NCCL_CTA_POLICY", T::Enum, "", "2.27", C::Tuning,
     "policy for how many thread blocks NCCL kernels use (default, efficiency, zero)",
     "0|1|2|DEFAULT|EFFICIENCY|ZERO"},
    {"NCCL_CUMEM_ENABLE", T::Bool, "", "2.18", C::Tuning,
     "allocate NCCL buffers with the cuMem virtual-memory API (needed for some features)"},
    {"NCCL_CUMEM_HOST_ENABLE", T::Bool, "", "2.23", C::Tuning,
     "allocate host-side buffers with cuMem too (NUMA-aware host memory)"},
    {"NCCL_DEBUG", T::Enum, "", "2.0", C::System,
     "log level: VERSION, WARN (keep in production), INFO or TRACE (diagnosis only)",
     "VERSION|WARN|INFO|TRACE|ABORT"},
    {"NCCL_DEBUG_FILE", T::String, "", "2.2.12", C::Debug,
     "write NCCL's log to this file pattern (%h host, %p pid) instead of stdout"},
    {"NCCL_DEBUG_SUBSYS", T::List, "INIT,BOOTSTRAP,ENV", "2.3.4", C::Debug,
     "subsystems that NCCL_DEBUG=INFO logs (INIT, NET, GRAPH, COLL, ...; ^ excludes)"},
    {"NCCL_DEBUG_TIMESTAMP_FORMAT", T::String, "", "2.26", C::Debug,
     "strftime-style format of the timestamp prefixed to log lines"},
    {"NCCL_DEBUG_TIMESTAMP_LEVELS", T::List, "WARN", "2.26", C::Debug,
     "log levels whose lines carry a timestamp"},
    {"NCCL_DMABUF_ENABLE", T::Bool, "1", "2.13", C::Tuning,
     "let the network register GPU memory through Linux DMA-BUF (GPUDirect RDMA without peermem)"},
    {"NCCL_GRAPH_MIXING_SUPPORT", T::Bool, "1", "2.13", C::Tuning,
     "support mixing CUDA-graph and non-graph launches on one communicator (costs some latency)"},
    {"NCCL_GRAPH_REGISTER", T::Bool, "1", "2.11", C::Tuning,
     "register user buffers captured in CUDA graphs, avoiding copies"},
    {"NCCL_HOSTID", T::String, "", "2.11", C::System,
     "override the host identity NCCL uses to group ranks per node (containers sharing a host)"},
    {"NCCL_IB_ADAPTIVE_ROUTING", T::Bool, "", "2.16", C::Tuning,
     "use InfiniBand adaptive routing for data messages (on by default on IB, off on RoCE)"},
    {"NCCL_IB_ADDR_FAMILY", T::Enum, "AF_INET", "2.21", C::System,
     "address family of the GID NCCL picks by itself on RoCE", "AF_INET|AF_INET6"},
    {"NCCL_IB_ADDR_RANGE", T::String, "", "2.21", C::System,
     "CIDR range the automatically picked RoCE GID must fall in (e.g. 10.0.0.0/8)"},
    {"NCCL_IB_AR_THRESHOLD", T::Size, "8192", "2.6", C::Tuning,
     "message size from which IB traffic is sent in a way that allows adaptive routing"},
    {"NCCL_IB_CUDA_SUPPORT", T::Bool, "", "2.0", C::Debug,
     "older switch forcing GPUDirect RDMA on or off; NCCL_NET_GDR_LEVEL replaced it"},
    {"NCCL_IB_DISABLE", T::Bool, "0", "2.0", C::System,
     "do not use the IB verbs transport (InfiniBand, RoCE); fall back to other networks or sockets"},
    {"NCCL_IB_ECE_ENABLE", T::Bool, "1", "2.23", C::Tuning,
     "negotiate Enhanced Connection Establishment options (e.g. congestion control) with the peer"},
    {"NCCL_IB_FIFO_TC", T::Int, "", "2.22", C::System,
     "traffic class for the small control (FIFO) messages, apart from the data's NCCL_IB_TC", {}, 0, 255},
    {"NCCL_IB_GDR_LEVEL", T::Enum, "", "2.3.4", C::Tuning,
     "older name of NCCL_NET_GDR_LEVEL", "LOC|PIX|PXB|PHB|SYS|0|1|2|3|4|5"},
    {"NCCL_IB_GID_INDEX", T::Int, "-1", "2.1.4", C::System,
     "GID table index used on RoCE ports; -1 lets NCCL (2.21+) choose by address family", {}, -1, 1023},
    {"NCCL_IB_HCA", T::List, "", "2.0", C::System,
     "which RDMA devices and ports to use: prefixes, ^ to exclude, = for exact names, :port"},
    {"NCCL_IB_MERGE_NICS", T::Bool, "1", "2.20", C::Tuning,
     "merge the ports of a dual-port NIC into one logical device"},
    {"NCCL_IB_MERGE_VFS", T::Bool, "1", "2.14", C::Tuning,
     "treat virtual functions of one physical NIC as a single device in the topology"},
    {"NCCL_IB_PCI_RELAXED_ORDERING", T::Enum, "2", "2.12", C::Tuning,
     "register memory with PCIe relaxed ordering: 0 off, 1 on, 2 when available", "0|1|2"},
    {"NCCL_IB_PKEY", T::Int, "0", "2.8", C::System,
     "InfiniBand partition key index used by NCCL's queue pairs", {}, 0, {}},
    {"NCCL_IB_QPS_PER_CONNECTION", T::Int, "1", "2.10", C::Tuning,
     "queue pairs per connection; more QPs spread traffic over more ECMP paths on RoCE", {}, 1, 128},
    {"NCCL_IB_RETRY_CNT", T::Int, "7", "2.1.15", C::System,
     "transport retries before a queue pair fails (IB spec field, 3 bits)", {}, 0, 7},
    {"NCCL_IB_RETURN_ASYNC_EVENTS", T::Bool, "1", "2.23", C::System,
     "turn fatal IB asynchronous events (port down, device fatal) into NCCL errors"},
    {"NCCL_IB_ROCE_VERSION_NUM", T::Enum, "2", "2.21", C::System,
     "RoCE version of the GID NCCL picks by itself", "1|2"},
    {"NCCL_IB_SL", T::Int, "0", "2.1.4", C::System,
     "InfiniBand service level of NCCL's queue pairs (maps to a virtual lane by the SM)", {}, 0, 15},
    {"NCCL_IB_SPLIT_DATA_ON_QPS", T::Bool, "0", "2.18", C::Tuning,
     "split each message over all QPs of a connection (1) or spread whole messages over them (0)"},
    {"NCCL_IB_TC", T::Int, "0", "2.1.15", C::System,
     "traffic class of NCCL's queue pairs; on RoCE the IP DSCP is TC >> 2", {}, 0, 255},
    {"NCCL_IB_TIMEOUT", T::Int, "20", "2.0", C::System,
     "IB ack timeout exponent: 4.096 us * 2^value before a retry", {}, 1, 31},
    {"NCCL_IB_USE_INLINE", T::Bool, "0", "2.10", C::Tuning,
     "send small control messages inline in the work request"},
    {"NCCL_IGNORE_CPU_AFFINITY", T::Bool, "0", "2.4.6", C::System,
     "ignore the process's CPU affinity and bind threads by GPU locality only"},
    {"NCCL_LAUNCH_MODE", T::Enum, "PARALLEL", "2.1.2", C::Debug,
     "how kernels of a multi-GPU process are launched: PARALLEL or GROUP", "PARALLEL|GROUP"},
    {"NCCL_LL128_BUFFSIZE", T::Size, "", "2.5", C::Tuning,
     "bytes of buffer per channel for the LL128 protocol"},
    {"NCCL_LL_BUFFSIZE", T::Size, "", "2.5", C::Tuning,
     "bytes of buffer per channel for the LL protocol"},
    {"NCCL_LL_THRESHOLD", T::Size, "", "2.0", C::Debug,
     "size below which the LL protocol was used (removed; NCCL_PROTO replaces it)"},
    {"NCCL_LOCAL_REGISTER", T::Bool, "1", "2.19", C::Tuning,
     "register user buffers passed to ncclCommRegister for zero-copy transfers"},
    {"NCCL_MAX_CTAS", T::Int, "", "2.17", C::Tuning,
     "most thread blocks (channels) a collective may use; overrides ncclConfig_t", {}, 1, 64},
    {"NCCL_MAX_NCHANNELS", T::Int, "", "2.5", C::Tuning,
     "most channels NCCL may use; fewer frees SMs for compute and lowers bandwidth", {}, 1, 64},
    {"NCCL_MAX_NRINGS", T::Int, "", "2.0", C::Tuning,
     "older name of NCCL_MAX_NCHANNELS", {}, 1, 64},
    {"NCCL_MAX_P2P_NCHANNELS", T::Int, "", "2.11", C::Tuning,
     "most channels used for point-to-point operations", {}, 1, 64},
    {"NCCL_MIN_CTAS", T::Int, "", "2.17", C::Tuning,
     "fewest thread blocks (channels) a collective uses; overrides ncclConfig_t", {}, 1, 64},
    {"NCCL_MIN_NCHANNELS", T::Int, "", "2.5", C::Tuning,
     "fewest channels NCCL uses", {}, 1, 64},
    {"NCCL_MIN_NRINGS", T::Int, "", "2.0", C::Tuning,
     "older name of NCCL_MIN_NCHANNELS", {}, 1, 64},
    {"NCCL_MIN_P2P_NCHANNELS", T::Int, "", "2.11", C::Tuning,
     "fewest channels used for point-to-point operations", {}, 1, 64},
    {"NCCL_MNNVL_ENABLE", T::Enum, "2", "2.21", C::System,
     "use multi-node NVLink (NVL72 and similar): 0 off, 1 on, 2 when the fabric is present", "0|1|2"},
    {"NCCL_NCHANNELS_PER_NET_PEER", T::Int, "", "2.12", C::Tuning,
     "channels used per remote peer for network point-to-point traffic", {}, 1, 64},
    {"NCCL_NET", T::String, "", "2.10", C::System,
     "force the network module by name (IB, Socket, or a plugin's name)"},
    {"NCCL_NET_GDR_C2C", T::Bool, "", "2.26", C::Tuning,
     "allow GPUDirect RDMA over the CPU-GPU C2C link (Grace Hopper / Grace Blackwell)"},
    {"NCCL_NET_GDR_LEVEL", T::Enum, "", "2.4", C::Tuning,
     "farthest GPU-NIC PCIe distance at which the NIC reads/writes GPU memory directly",
     "LOC|PIX|PXB|PHB|SYS|0|1|2|3|4|5"},
    {"NCCL_NET_GDR_READ", T::Bool, "", "2.4.2", C::Tuning,
     "also use GPUDirect RDMA when sending (NIC reads GPU memory); on by default on NVLink platforms"},
    {"NCCL_NET_PLUGIN", T::String, "", "2.11", C::System,
     "name or path of the network plugin library to load (libnccl-net-<name>.so)"},
    {"NCCL_NET_SHARED_BUFFERS", T::Bool, "1", "2.8", C::Tuning,
     "share network buffers between peers (less memory, used with PXN)"},
    {"NCCL_NET_SHARED_COMMS", T::Bool, "1", "2.12", C::Tuning,
     "reuse network connections between channels when PXN is used"},
    {"NCCL_NSOCKS_PERTHREAD", T::Int, "", "2.4.8", C::System,
     "TCP sockets per helper thread of the socket transport; threads x sockets <= 64", {}, 1, 64},
    {"NCCL_NTHREADS", T::Int, "512", "2.0", C::Tuning,
     "CUDA threads per NCCL block (64, 128, 256 or 512)", {}, 64, 512},
    {"NCCL_NVB_DISABLE", T::Bool, "0", "2.11", C::Debug,
     "do not route intra-node traffic through an intermediate GPU over NVLink"},
    {"NCCL_NVLS_CHUNKSIZE", T::Size, "131072", "2.23", C::Tuning,
     "chunk size of the NVLink SHARP (NVLS) algorithms"},
    {"NCCL_NVLS_ENABLE", T::Bool, "", "2.17", C::Tuning,
     "use NVLink SHARP (NVSwitch in-network reduction) where the system has it"},
    {"NCCL_OOB_NET_ENABLE", T::Bool, "0", "2.23", C::System,
     "run bootstrap traffic over the network plugin instead of TCP sockets"},
    {"NCCL_OOB_NET_IFNAME", T::List, "", "2.23", C::System,
     "which network-plugin devices the out-of-band bootstrap may use"},
    {"NCCL_P2P_DIRECT_DISABLE", T::Bool, "0", "2.7", C::Debug,
     "stop ranks of one process from accessing each other's GPU buffers directly"},
    {"NCCL_P2P_DISABLE", T::Bool, "0", "2.0", C::Debug,
     "turn off GPU peer-to-peer (NVLink/PCIe) transfers inside a node"},
    {"NCCL_P2P_LEVEL", T::Enum, "", "2.3.4", C::Debug,
     "farthest GPU-GPU distance at which P2P is used (LOC disables it)",
     "LOC|NVL|PIX|PXB|PHB|SYS|0|1|2|3|4|5"},
    {"NCCL_P2P_LL_THRESHOLD", T::Size, "16384", "2.14", C::Tuning,
     "largest point-to-point message sent with the LL protocol"},
    {"NCCL_P2P_NET_CHUNKSIZE", T::Size, "131072", "2.14", C::Tuning,
     "chunk size of point-to-point transfers over the network"},
    {"NCCL_P2P_NVL_CHUNKSIZE", T::Size, "524288", "2.14", C::Tuning,
     "chunk size of point-to-point transfers over NVLink"},
    {"NCCL_P2P_PCI_CHUNKSIZE", T::Size, "131072", "2.14", C::Tuning,
     "chunk size of point-to-point transfers over PCIe"},
    {"NCCL_P2P_PXN_LEVEL", T::Enum, "2", "2.12", C::Tuning,
     "when to relay network traffic through a GPU near the NIC (PXN): 0 never, 1 if needed, 2 always",
     "0|1|2"},
    {"NCCL_PROFILER_PLUGIN", T::String, "", "2.23", C::System,
     "name or path of a profiler plugin library to load"},
    {"NCCL_PROTO", T::List, "", "2.5", C::Debug,
     "restrict collectives to these protocols (LL, LL128, Simple); overrides NCCL's tuning"},
    {"NCCL_PXN_DISABLE", T::Bool, "0", "2.12", C::Debug,
     "turn off PXN (relaying network traffic through a GPU closer to the NIC)"},
    {"NCCL_RAS_ADDR", T::String, "", "2.24", C::System,
     "host:port the RAS (reliability) service listens on for ncclras queries"},
    {"NCCL_RAS_ENABLE", T::Bool, "1", "2.24", C::System,
     "run the RAS service that tracks the health of every rank"},
    {"NCCL_RAS_TIMEOUT_FACTOR", T::Int, "1", "2.24", C::Tuning,
     "multiplier on the RAS service's internal timeouts", {}, 1, {}},
    {"NCCL_RINGS", T::String, "", "2.0", C::Debug,
     "hand-written ring orders (removed in 2.5)"},
    {"NCCL_RUNTIME_CONNECT", T::Bool, "1", "2.22", C::Tuning,
     "connect peers lazily, when an operation first needs them (less memory, faster init)"},
    {"NCCL_SET_STACK_SIZE", T::Bool, "0", "2.9", C::Tuning,
     "raise the CUDA stack size to what NCCL kernels need before launching"},
    {"NCCL_SET_THREAD_NAME", T::Bool, "0", "2.12", C::System,
     "give NCCL's helper threads readable names (for top, gdb)"},
    {"NCCL_SHM_DISABLE", T::Bool, "0", "2.0", C::Debug,
     "turn off the shared-memory transport between processes on one node"},
    {"NCCL_SHM_LOCALITY", T::Enum, "2", "2.18", C::Tuning,
     "which side allocates the SHM buffer: 1 sender, 2 receiver", "1|2"},
    {"NCCL_SHM_MEMCPY_MODE", T::Enum, "1", "2.18", C::Tuning,
     "who copies for the SHM transport: 1 sender, 2 receiver, 3 both", "1|2|3"},
    {"NCCL_SHM_USE_CUDA_MEMCPY", T::Bool, "0", "2.18", C::Tuning,
     "use a CUDA copy engine instead of SMs for the SHM transport"},
    {"NCCL_SINGLE_RING_THRESHOLD", T::Size, "", "2.1", C::Debug,
     "size below which one ring was used (removed)"},
    {"NCCL_SOCKET_FAMILY", T::Enum, "", "2.12", C::System,
     "address family of the bootstrap and socket interfaces", "AF_INET|AF_INET6"},
    {"NCCL_SOCKET_IFNAME", T::List, "", "2.0", C::System,
     "which IP interfaces bootstrap and sockets use: prefixes, ^ to exclude, = for exact names"},
    {"NCCL_SOCKET_NTHREADS", T::Int, "", "2.4.8", C::System,
     "helper threads per connection of the socket transport", {}, 1, 16},
    {"NCCL_SOCKET_RETRY_CNT", T::Int, "34", "2.24", C::System,
     "times a failed socket connect is retried during bootstrap", {}, 0, {}},
    {"NCCL_SOCKET_RETRY_SLEEP_MSEC", T::Int, "100", "2.24", C::System,
     "base wait in milliseconds between socket connect retries (grows each retry)", {}, 0, {}},
    {"NCCL_TOPO_DUMP_FILE", T::String, "", "2.6", C::Debug,
     "write the topology NCCL detected to this XML file"},
    {"NCCL_TOPO_FILE", T::String, "", "2.6", C::System,
     "XML topology file loaded before detection (virtual machines hiding the PCIe tree)"},
    {"NCCL_TREE_THRESHOLD", T::Size, "", "2.4", C::Debug,
     "size below which the tree algorithm was used (removed; NCCL_ALGO replaces it)"},
    {"NCCL_TUNER_PLUGIN", T::String, "", "2.19", C::System,
     "name or path of a tuner plugin library (algorithm/protocol/channel choice per size)"},
    {"NCCL_UID_STAGGER_RATE", T::Int, "7000", "2.23", C::Tuning,
     "messages per second at which ranks contact the bootstrap root at scale", {}, 1, {}},
    {"NCCL_UID_STAGGER_THRESHOLD", T::Int, "256", "2.23", C::Tuning,
     "rank count from which contacts to the bootstrap root are staggered", {}, 1, {}},
    {"NCCL_WORK_FIFO_BYTES", T::Size, "1048576", "2.19", C::Tuning,
     "bytes of the host-to-GPU work queue per communicator"},
};

}  // namespace

const char* to_string(VarType t) {
  switch (t) {
    case VarType::Int: return "int";
    case VarType::Bool: return "bool";
    case VarType::String: return "string";
    case VarType::Enum: return "enum";
    case VarType::Size: return "size";
    case VarType::List: return "list";
  }
  return "?";
}

const char* to_string(Category c) {
  switch (c) {
    case Category::System: return "system";
    case Category::Tuning: return "tuning";
    case Category::Debug: return "debug";
  }
  return "?";
}

const std::vector<VarInfo>& known_vars() { return kVars; }

const VarInfo* find_var(std::string_view name) {
  auto it = std::lower_bound(kVars.begin(), kVars.end(), name,
                             [](const VarInfo& v, std::string_view n) { return v.name < n; });
  if (it != kVars.end() && it->name == name) return &*it;
  return nullptr;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  a = a.substr(0, 256);
  b = b.substr(0, 256);
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::size_t edit_distance_within(std::string_view a, std::string_view b, std::size_t limit) {
  a = a.substr(0, 256);
  b = b.substr(0, 256);
  const std::size_t n = a.size(), m = b.size();
  const std::size_t over = std::min<std::size_t>(limit, 256) + 1;
  if ((n > m ? n - m : m - n) >= over) return over;
  // Only cells within `limit` of the diagonal can hold a distance within the limit (a cell
  // (i, j) costs at least |i - j|), so each row computes that band and marks its edges "over".
  // No allocation: lint calls this once per known name for every unknown one.
  std::array<std::size_t, 258> prev_row{}, cur_row{};
  std::size_t* prev = prev_row.data();
  std::size_t* cur = cur_row.data();
  for (std::size_t j = 0; j <= m; ++j) prev[j] = std::min(j, over);
  for (std::size_t i = 1; i <= n; ++i) {
    const std::size_t lo = i > over - 1 ? i - (over - 1) : 1;
    const std::size_t hi = std::min(m, i + (over - 1));
    cur[lo - 1] = lo == 1 ? std::min(i, over) : over;
    std::size_t row_min = cur[lo - 1];
    for (std::size_t j = lo; j <= hi; ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub, over});
      row_min = std::min(row_min, cur[j]);
    }
    if (hi < m) cur[hi + 1] = over;
    // Every path to the last cell crosses this row, and costs never decrease along a path.
    if (row_min >= over) return over;
    std::swap(prev, cur);
  }
  return prev[m];
}

std::string closest_var(std::string_view name) { return closest_var(name, kVars); }

std::string closest_var(std::string_view name, const std::vector<VarInfo>& vars) {
  std::size_t best = SIZE_MAX;
  std::string_view best_name;
  for (const auto& v : vars) {
    const std::size_t d = edit_distance_within(name, v.name, 3);
    if (d < best) {
      best = d;
      best_name = v.name;
    }
  }
  if (best == 0 || best > 3 || best * 2 >= name.size()) return "";
  return std::string(best_name);
}

}  // namespace fabscope::ncclenv
