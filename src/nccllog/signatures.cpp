#include "nccllog/signatures.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "core/strings.hpp"

namespace fabscope::nccllog {

namespace {

using S = Severity;
using M = MatchOn;

// Order matters: the first entry that matches wins, so specific entries come before the
// generic ones they overlap with (an ibv_modify_qp "Network is unreachable" is a RoCE routing
// problem, not a socket one). Line formats are those of NCCL's sources (net_ib, socket.cc,
// bootstrap.cc, shmutils.cc, init.cc) from 2.5 to 2.28, and of PyTorch's ProcessGroupNCCL.
const Signature kSignatures[] = {
    // --- InfiniBand / RoCE completion errors: "NET/IB : Got completion from peer ... status=N"
    {"ib_wc_retry_exceeded", S::Fail, M::Warn, "", "Got completion", "", 12,
     "IB completion status 12 (IBV_WC_RETRY_EXC_ERR): transport retry counter exceeded",
     "The peer HCA never acknowledged: a link went down or flapped, the two NICs cannot reach each "
     "other (wrong GID index or missing route on RoCE, different subnets, a switch port down), or "
     "heavy loss/congestion (RoCE without PFC/ECN) outlasted NCCL_IB_TIMEOUT x NCCL_IB_RETRY_CNT.",
     "Check both ports (ibstat, `fabscope check`), link-down counters and switch logs; on RoCE verify "
     "NCCL_IB_GID_INDEX selects the RoCE v2 GID of the right IP and that PFC/ECN are configured; "
     "raise NCCL_IB_TIMEOUT (e.g. 22) only once connectivity is proven."},
    {"ib_wc_rnr_retry_exceeded", S::Fail, M::Warn, "", "Got completion", "", 13,
     "IB completion status 13 (IBV_WC_RNR_RETRY_EXC_ERR): receiver not ready, retries exhausted",
     "The remote QP had no receive posted for too long: the peer process stalled, crashed or is "
     "far behind (a hung rank, a GPU fault on the other side).",
     "Look at the peer's own log for the first error; check that every rank is alive and that no "
     "GPU reported Xid errors."},
    {"ib_wc_local_protection", S::Fail, M::Warn, "", "Got completion", "", 4,
     "IB completion status 4 (IBV_WC_LOC_PROT_ERR): local protection error",
     "The HCA could not access the registered buffer: with GPUDirect RDMA this is usually PCIe ACS "
     "redirecting peer-to-peer traffic through the root complex, or IOMMU/VT-d translation, or a "
     "broken nvidia-peermem / dma-buf setup.",
     "Disable ACS on the PCIe switches between GPU and NIC (or run `fabscope check` for ACS), "
     "set iommu=pt, check nvidia_peermem is loaded; NCCL_NET_GDR_LEVEL=LOC confirms by turning "
     "GPUDirect RDMA off."},
    {"ib_wc_flush", S::Warn, M::Warn, "", "Got completion", "", 5,
     "IB completion status 5 (IBV_WC_WR_FLUSH_ERR): work request flushed",
     "The QP had already moved to the error state because of an earlier failure; this is a "
     "consequence, not the cause. On some systems it also means NICs of one node cannot talk to "
     "each other.",
     "Find the first completion error before this one (on this rank or its peer) and fix that."},
    {"ib_wc_remote_access", S::Fail, M::Warn, "", "Got completion", "", 10,
     "IB completion status 10 (IBV_WC_REM_ACCESS_ERR): remote access error",
     "The peer rejected the RDMA write: its memory registration is gone or invalid (peer aborted, "
     "mismatched NCCL versions or buffers freed under NCCL).",
     "Check the peer's log for an earlier abort; make sure all ranks run the same NCCL version."},
    {"ib_wc_remote_invalid_request", S::Fail, M::Warn, "", "Got completion", "", 9,
     "IB completion status 9 (IBV_WC_REM_INV_REQ_ERR): the peer rejected the request as invalid",
     "The responder found the request invalid: its QP went to the error state first (its own failure, "
     "such as a local access violation), or the message is longer than the responder accepts (ports set "
     "to different MTUs).",
     "Read the peer's log (the address in the line) for its first error; compare the active MTU of both "
     "ends (ibv_devinfo -v)."},
    {"ib_wc_remote_op", S::Fail, M::Warn, "", "Got completion", "", 11,
     "IB completion status 11 (IBV_WC_REM_OP_ERR): remote operation error",
     "The responder could not complete the operation, typically because its QP failed first.",
     "Read the peer's log for its first error."},
    {"ib_completion_error", S::Fail, M::Warn, "", "Got completion", "", -1,
     "IB completion error (see the ibv_wc_status code in the evidence)",
     "The HCA reported a failed work request; the status code says which part of the path failed.",
     "Look up the status in the evidence; check links (ibstat), counters and the peer's log."},
    // --- Queue-pair setup: "Call to ibv_modify_qp failed with error <strerror>"
    {"ib_modify_qp_unreachable", S::Fail, M::Warn, "", "ibv_modify_qp", "Network is unreachable", -1,
     "ibv_modify_qp failed: Network is unreachable",
     "RoCE: no route from the selected GID's IP to the peer's (the GID index picks an address on "
     "another subnet or a link-local/IPv6 entry, or the peer subnet has no route on this NIC).",
     "Set NCCL_IB_GID_INDEX to the RoCE v2 entry holding the NIC's routable IPv4 address "
     "(show_gids), or check routes/ARP between the two NIC IPs (ping -I <nic-ip>)."},
    {"ib_modify_qp_timeout", S::Fail, M::Warn, "", "ibv_modify_qp", "timed out", -1,
     "ibv_modify_qp failed: Connection timed out",
     "RoCE: the kernel could not resolve the peer's MAC (ARP/neighbour discovery failed), so the "
     "address handle could not be built: wrong GID/IP, different VLANs, or a firewall dropping ARP.",
     "Verify the NIC IPs can ping each other from the RDMA interfaces; check NCCL_IB_GID_INDEX and "
     "VLAN/subnet configuration of both ports."},
    {"ib_modify_qp_invalid", S::Fail, M::Warn, "", "ibv_modify_qp", "Invalid argument", -1,
     "ibv_modify_qp failed: Invalid argument",
     "A QP attribute the HCA rejects: usually a GID index that does not exist or is empty on this "
     "port, an MTU above the port's, or mixing IB and RoCE ports in one job.",
     "List the GID table (show_gids / ibv_devinfo -v), set NCCL_IB_GID_INDEX to a valid RoCE v2 "
     "entry and select HCAs of one link layer with NCCL_IB_HCA."},
    {"ib_modify_qp_no_data", S::Fail, M::Warn, "", "ibv_modify_qp", "No data available", -1,
     "ibv_modify_qp failed: No data available",
     "The GID entry NCCL selected is empty (no IP configured on the RoCE netdev, or the address was "
     "removed).",
     "Configure an IP on the RoCE interface or point NCCL_IB_GID_INDEX at a populated entry."},
    {"ib_modify_qp_no_device", S::Fail, M::Warn, "", "ibv_modify_qp", "No such device", -1,
     "ibv_modify_qp failed: No such device",
     "RoCE: the GID entry NCCL selected has no network device behind it in this namespace, typically "
     "inside a container that sees the HCA but not its netdev (or a GID index that exists only on the "
     "host), or a host/container driver mismatch.",
     "Set NCCL_IB_GID_INDEX to an entry listed inside the container (show_gids), give the container "
     "the RoCE netdev (host network or SR-IOV VF), or leave that HCA out with NCCL_IB_HCA=^<hca>."},
    {"ib_modify_qp_failed", S::Fail, M::Warn, "", "ibv_modify_qp", "", -1,
     "ibv_modify_qp failed",
     "Moving the QP to INIT/RTR/RTS failed; the error text names the reason (device gone, GID, "
     "route, MTU).",
     "Check the port state and GID table; see the error text in the evidence."},
    {"ib_reg_mr_memlock", S::Fail, M::Warn, "", "ibv_reg_mr", "Cannot allocate memory", -1,
     "ibv_reg_mr failed: Cannot allocate memory (locked-memory limit)",
     "ENOMEM from memory registration is almost always the locked-memory limit (ulimit -l) of the "
     "process: a container or a batch system that does not pass an unlimited memlock.",
     "Set memlock to unlimited for the job (limits.conf, docker --ulimit memlock=-1, Slurm "
     "PropagateResourceLimits, Kubernetes: the container runtime's default ulimits)."},
    {"ib_reg_mr_bad_address", S::Fail, M::Warn, "", "ibv_reg_mr", "Bad address", -1,
     "ibv_reg_mr failed: Bad address (GPU memory not registrable)",
     "EFAULT: the HCA driver could not pin the buffer, typically GPU memory without GPUDirect "
     "support (nvidia-peermem not loaded and no dma-buf).",
     "Load nvidia_peermem or use a driver and kernel with dma-buf; NCCL_NET_GDR_LEVEL=LOC avoids "
     "GPUDirect RDMA meanwhile."},
    {"ib_reg_mr_failed", S::Fail, M::Warn, "", "ibv_reg_mr", "", -1,
     "ibv_reg_mr failed: memory registration refused",
     "Locked-memory limit too low (ulimit -l, container memlock), or GPU memory registration not "
     "possible (nvidia-peermem not loaded and no dma-buf support).",
     "Set memlock to unlimited (limits.conf, docker --ulimit memlock=-1, Slurm PropagateResourceLimits); "
     "load nvidia_peermem or use a dma-buf capable driver and kernel."},
    {"ib_create_qp_failed", S::Fail, M::Warn, "", "ibv_create_qp", "", -1,
     "ibv_create_qp failed",
     "The HCA or the locked-memory limit ran out of resources for queue pairs.",
     "Raise the memlock limit; reduce NCCL_IB_QPS_PER_CONNECTION or the number of communicators."},
    {"ib_async_fatal", S::Fail, M::Warn, "NET/IB", "async fatal event", "", -1,
     "HCA reported a fatal asynchronous event",
     "The adapter or a QP entered a fatal state (firmware error, PCIe error, device reset).",
     "Check dmesg for mlx5 health/syndrome messages; reset or replace the adapter."},
    // "Got async event : GID table change" (before the generic async event entry, which it is too)
    {"ib_gid_table_changed", S::Warn, M::Warn, "NET/IB", "GID table change", "", -1,
     "GID table changed during the job",
     "An IP address was added or removed on a RoCE interface while NCCL was running, so GID indices "
     "may now point at different addresses.",
     "Keep RoCE interface addresses static during jobs (NetworkManager, DHCP renewals, cloud agents)."},
    // A work-queue error the HCA raises by itself: the QP is in error, and the peer's completions
    // fail next (nccl#1710: status 9 on the other node).
    {"ib_async_local_access", S::Fail, M::Warn, "NET/IB", "async event", "local access violation", -1,
     "the HCA stopped a queue pair: local access violation (IB async event)",
     "A work request of this queue pair broke the HCA's local checks: memory outside its registration or "
     "without the access rights it needs, or a message larger than the path allows (hosts or ports set to "
     "different MTUs). The QP goes to the error state and its peer then gets completion errors (remote "
     "invalid request, status 9, or flushes). Reported with one NCCL network plugin and not another, it "
     "points at that plugin's memory registration.",
     "Compare the active MTU of every port the job uses (ibv_devinfo -v, fabscope check) and make them "
     "equal; check which net plugin ran (NCCL_NET_PLUGIN, the container's plugin) and try the other one; "
     "look for the peer's completion errors, which follow from this one."},
    {"ib_async_event", S::Warn, M::Warn, "NET/IB", "async event", "", -1,
     "HCA reported an asynchronous event (port error, link change)",
     "A port went down or changed state during the job: a link flap, a cable or transceiver problem.",
     "Check the port's link_downed and symbol error counters and the switch port; replace the cable "
     "if they grow."},
    {"ib_incompatible_devices", S::Fail, M::Warn, "", "incompatible devices", "", -1,
     "NCCL tried to connect NICs of different link layers",
     "One side uses an InfiniBand port and the other a RoCE (Ethernet) port.",
     "Select NICs of one link layer on every node with NCCL_IB_HCA."},
    {"ib_no_ip_interface", S::Fail, M::Warn, "NET/IB", "No IP interface found", "", -1,
     "NET/IB found no IP interface for its out-of-band connection",
     "NCCL_SOCKET_IFNAME / NCCL_IB_OOB_IFNAME matches no interface that is up with an address.",
     "Point NCCL_SOCKET_IFNAME at an interface that exists on every node (ip -br addr)."},
    // --- An RDMA device that NET/IB lists but cannot open: "Call to ibv_open_device failed" and
    // "NET/IB : Unable to open device mlx5_bond_0", then "NET/IB : No device found" (nccl#451).
    {"ib_open_device_failed", S::Warn, M::Warn, "", "ibv_open_device", "", -1,
     "an RDMA device could not be opened (ibv_open_device failed)",
     "The device is listed under /sys/class/infiniband but its /dev/infiniband/uverbsN node is missing or "
     "not accessible where the job runs: a container started without the RDMA devices, wrong permissions, "
     "or a device in a bad state. NET/IB then skips it; with none left, NCCL's network traffic goes over TCP "
     "sockets.",
     "Expose /dev/infiniband to the container (docker --device=/dev/infiniband, --cap-add=IPC_LOCK; "
     "Kubernetes: an RDMA device plugin), and check ls -l /dev/infiniband and ibv_devinfo inside the job's "
     "environment."},
    {"ib_unable_to_open_device", S::Warn, M::Warn, "NET/IB", "Unable to open device", "", -1,
     "NET/IB could not open an RDMA device and skips it",
     "NET/IB lists the device but opening it failed (the ibv_open_device WARN before it says how): a "
     "container without /dev/infiniband, wrong permissions, or a device in a bad state.",
     "Expose /dev/infiniband to the container (docker --device=/dev/infiniband, --cap-add=IPC_LOCK; "
     "Kubernetes: an RDMA device plugin), and check ibv_devinfo inside the job's environment."},
    {"no_algorithm", S::Fail, M::Warn, "", "no algorithm/protocol available", "", -1,
     "NCCL found no algorithm and protocol to run a collective",
     "Every algorithm/protocol pair NCCL could use for this collective is excluded: NCCL_ALGO or NCCL_PROTO "
     "allow only ones this job cannot run (NCCL_ALGO=CollNet without CollNet/SHARP, NVLS without "
     "NVSwitches, a protocol list with a typo), or a tuner plugin disabled them all.",
     "Unset NCCL_ALGO / NCCL_PROTO or let them include Ring and Tree (fabscope env lint checks them); with "
     "a tuner plugin, run once without it (NCCL_TUNER_PLUGIN=none)."},
    {"ib_verbs_missing", S::Warn, M::Warn, "", "Failed to open libibverbs", "", -1,
     "libibverbs could not be loaded: InfiniBand/RoCE disabled",
     "rdma-core (libibverbs.so.1) is not installed in this environment, typically a container image "
     "without it, so NCCL falls back to TCP sockets.",
     "Install rdma-core / libibverbs1 (and the provider, e.g. libmlx5-1) in the image and expose "
     "/dev/infiniband to the container."},
    // --- Sockets (bootstrap and NET/Socket)
    {"socket_no_interface", S::Fail, M::Warn, "", "no socket interface found", "", -1,
     "No usable network interface for NCCL's sockets",
     "NCCL_SOCKET_IFNAME matches no interface that is up with an address (a typo, an interface that "
     "exists on some nodes only, or a container network namespace without it).",
     "Set NCCL_SOCKET_IFNAME to an interface present on every node (ip -br addr), or unset it."},
    {"topo_net_not_found", S::Fail, M::Warn, "", "Could not find NET with id", "", -1,
     "NCCL's topology graph has no network device with the id it looked up",
     "NCCL's graph code (graph/topo.h) asked for a NIC its own topology does not hold: a defect of some NCCL "
     "releases with some NIC layouts or network plugins (a container's bundled NCCL is the usual suspect), "
     "seen with NCCL_TOPO_FILE or NCCL_IB_HCA that do not match the node too.",
     "Upgrade NCCL (the container's or the framework wheel's bundled library); check NCCL_TOPO_FILE, "
     "NCCL_IB_HCA and NCCL_NET_PLUGIN against the node (fabscope probe lists its NICs)."},
    {"topo_no_path", S::Fail, M::Warn, "", "Failed to find reverse path", "", -1,
     "NCCL's topology search found no way back between two nodes of this machine's topology",
     "The topology NCCL built of the PCIe switches, CPUs, GPUs and NICs has a link with no reverse: "
     "an NCCL release that does not know this platform (fixed in later releases), or an "
     "NCCL_TOPO_FILE that does not match the machine.",
     "Upgrade NCCL (the one bundled with the framework, too); unset NCCL_TOPO_FILE or regenerate it "
     "on this machine (NCCL_TOPO_DUMP_FILE)."},
    {"socket_address_unset", S::Fail, M::Warn, "", "is neither AF_INET(2) nor AF_INET6(10)", "", -1,
     "A socket address NCCL was given was never filled in",
     "NCCL tried to connect to an address with no family (an empty address): the interface it was "
     "to take the address from was not found, most often because NCCL_SOCKET_IFNAME names an "
     "interface that does not exist on this node.",
     "Set NCCL_SOCKET_IFNAME to an interface present on every node (ip -br addr), or unset it."},
    {"socket_no_interface_net", S::Fail, M::Warn, "NET/Socket", "no interface found", "", -1,
     "NET/Socket found no interface",
     "As for the bootstrap: the interface filter matches nothing usable.",
     "Set NCCL_SOCKET_IFNAME to an interface present on every node, or unset it."},
    {"socket_connection_refused", S::Fail, M::Warn, "", "Connection refused", "", -1,
     "Socket connection refused",
     "Nothing listens at the peer address: the peer rank exited or was not started yet, a firewall "
     "REJECTs the port range, or NCCL picked an interface/IP the peer is not reachable on (docker0, "
     "a veth, a NAT address).",
     "Check that all ranks started and are alive; pin NCCL_SOCKET_IFNAME to the cluster interface; "
     "open the ephemeral port range between nodes in the firewall."},
    {"socket_connection_timeout", S::Fail, M::Warn, "", "Connection timed out", "", -1,
     "Socket connection timed out",
     "Packets to the peer are dropped: a firewall DROP rule, a route through the wrong interface, or "
     "an address that is not reachable from this node.",
     "Pin NCCL_SOCKET_IFNAME to the interface the nodes share; test with nc/ping between the IPs "
     "in the log; open the firewall between nodes."},
    {"socket_network_unreachable", S::Fail, M::Warn, "", "Network is unreachable", "", -1,
     "Socket connect failed: Network is unreachable",
     "No route to the peer's address from the chosen interface (an IPv6 link-local or a container-only "
     "address was advertised).",
     "Pin NCCL_SOCKET_IFNAME (and NCCL_SOCKET_FAMILY=AF_INET if IPv6 is not routed)."},
    {"socket_connection_aborted", S::Fail, M::Warn, "", "Software caused connection abort", "", -1,
     "Socket connection aborted",
     "The local stack aborted the connection, usually after the peer refused it repeatedly (NCCL "
     "before 2.24 reported refused connections this way after its retries).",
     "As for refused connections: check the peer is alive and reachable on the chosen interface."},
    {"socket_closed_by_peer", S::Fail, M::Warn, "", "Connection closed by remote peer", "", -1,
     "The peer closed the connection",
     "The remote rank exited or crashed (often after its own error), or something else connected to "
     "NCCL's port (a security scanner) and hung up.",
     "Read the peer's log for the first error; this message is usually a consequence."},
    {"socket_connection_reset", S::Fail, M::Warn, "", "Connection reset by peer", "", -1,
     "Connection reset by the peer",
     "The remote process died or its host rebooted / dropped the connection.",
     "Read the peer's log and the node's kernel log (OOM killer, Xid)."},
    {"socket_connect_retry", S::Info, M::Info, "Call to connect returned", "", "", -1,
     "Socket connect failed and is being retried",
     "The peer was not listening yet or the connection was refused/timed out; NCCL retries a few "
     "times before giving up.",
     "Nothing if the job went on; otherwise see the refused/timed-out finding."},
    {"proxy_op_failed", S::Fail, M::Warn, "", "Failed to execute operation", "", -1,
     "A proxy thread could not serve a peer's request",
     "The proxy of this rank failed an operation (Connect, Setup) for a peer, usually because the "
     "peer or the connection failed first.",
     "Read the first error of the rank named after 'from rank'; this line is usually a consequence."},
    {"proxy_progress_error", S::Fail, M::Warn, "", "Error encountered progressing operation", "", -1,
     "A proxy thread failed while progressing an operation and closed the connection",
     "A socket or network error on the proxy connection, most often because the peer exited.",
     "Read the peer's log for the first error."},
    {"socket_recv_failed", S::Fail, M::Warn, "", "Socket recv failed", "", -1,
     "Receiving on an NCCL socket failed",
     "The peer closed the connection or the network dropped it while a rank waited for data.",
     "Read the peer's log for the first error; check the interface NCCL's sockets use."},
    // --- Memory. nvls_bind_failed comes before cuda_oom: the bind fails with CUDA error 2 'out of
    // memory' when the fabric's multicast resources are used up, which is no shortage of GPU memory.
    {"nvls_bind_failed", S::Fail, M::Warn, "", "Failed to bind NVLink SHARP", "", -1,
     "NVLink SHARP (NVLS) multicast memory could not be bound",
     "The NVSwitch fabric refused the multicast group NCCL set up for NVLS: the NVSwitch Fabric Manager "
     "is not running, was restarted without a GPU reset, or reports an error, or an NVLink or NVSwitch "
     "is degraded; or its multicast resources are used up: the NVSwitches hold a fixed number of "
     "multicast objects, and a job that sets up NVLS on many communicators can take them all (CUDA then "
     "reports error 2, 'out of memory', about those resources, not about GPU memory). NCCL 2.29+ fails the "
     "communicator with this WARN (2.27-2.28 only when NVLS is forced with "
     "NCCL_NVLS_ENABLE=1, else an INFO line and no NVLS); older releases print a Cuda failure from "
     "transport/nvls.cc instead.",
     "Check the fabric state of each GPU (nvidia-smi -q, Fabric: State Completed, Status Success) and "
     "the Fabric Manager service and log; after a Fabric Manager restart reset the GPUs (or reboot). "
     "With CUDA error 2, count the communicators that use NVLS (sub-communicators included) or "
     "compare with the NCCL version that worked. NCCL_NVLS_ENABLE=0 avoids NVLS and this error."},
    {"cuda_oom", S::Fail, M::Warn, "", "out of memory", "", -1,
     "CUDA out of memory inside NCCL",
     "The GPU has no room for NCCL's buffers (channels x buffer size x peers), typically because the "
     "application already took it all, or many communicators each allocate their own.",
     "Leave headroom (PyTorch: reserve less; fewer communicators), or reduce NCCL_BUFFSIZE / "
     "NCCL_MAX_NCHANNELS / NCCL_NCHANNELS_PER_NET_PEER."},
    {"cuda_failure", S::Fail, M::Warn, "", "Cuda failure", "", -1,
     "A CUDA call inside NCCL failed",
     "The CUDA runtime returned an error (illegal address, launch failure, driver/runtime mismatch); "
     "the error string says which.",
     "Check dmesg for Xid errors, the driver vs CUDA runtime versions, and the application's own "
     "kernels (compute-sanitizer)."},
    {"shm_exhausted", S::Fail, M::Warn, "", "shared memory segment", "", -1,
     "Could not create a shared-memory segment in /dev/shm",
     "/dev/shm is too small, typically a container's 64 MB default, so the SHM transport cannot "
     "allocate its buffers.",
     "Run the container with --ipc=host or --shm-size=1g (Kubernetes: an emptyDir medium Memory at "
     "/dev/shm)."},
    {"shm_fallocate_failed", S::Fail, M::Warn, "", "posix_fallocate", "", -1,
     "Could not allocate a /dev/shm segment (posix_fallocate failed)",
     "/dev/shm has no room for the SHM transport's buffers, typically a container's 64 MB default.",
     "Run the container with --ipc=host or a larger --shm-size (Kubernetes: an emptyDir medium "
     "Memory at /dev/shm); NCCL_SHM_DISABLE=1 avoids SHM at some cost."},
    {"proxy_call_failed", S::Fail, M::Warn, "", "Proxy Call to rank", "", -1,
     "A call to a peer's proxy failed",
     "The proxy of the peer rank failed or closed its connection first.",
     "Read the log of the rank named in the line for its first error."},
    {"shm_extend_failed", S::Fail, M::Warn, "", "failed to extend /dev/shm", "", -1,
     "Could not grow a /dev/shm segment",
     "/dev/shm is full or too small (container default 64 MB).",
     "Run the container with --ipc=host or a larger --shm-size."},
    // --- NVLink SHARP (NVLS, through the NVSwitches) and CollNet (SHARP in the IB switches)
    {"collnet_fallback", S::Info, M::Warn, "", "Cannot initialize CollNet", "", -1,
     "CollNet (SHARP) could not be set up: NCCL uses the point-to-point network instead",
     "A rank of the node could not connect CollNet (the SHARP plugin is missing or failed, the switches "
     "or the SHARP aggregation manager do not offer it), so NCCL freed it and runs the collectives over "
     "the point-to-point network. Its ncclSystemError traces (transport.cc, init.cc -> 2) belong to "
     "this fallback.",
     "Nothing to do unless SHARP is expected here: then check the SHARP plugin (NCCL_NET_PLUGIN, "
     "HPC-X), that sharp_am runs beside the subnet manager, and the plugin's own WARN before this one; "
     "NCCL_COLLNET_ENABLE=0 stops NCCL from trying. A note: it never makes the verdict \"NCCL failed\"."},
    {"collnet_algo_ignored", S::Info, M::Warn, "", "CollNet is not supported or fails to initialize", "", -1,
     "NCCL_ALGO asks for CollNet, which is not available: the setting is ignored",
     "NCCL_ALGO=COLLNET was set but CollNet did not start (no SHARP plugin or no SHARP-capable "
     "switches), so NCCL chose among its other algorithms.",
     "Unset NCCL_ALGO (NCCL picks the algorithm per size), or make CollNet available (SHARP plugin, "
     "NCCL_COLLNET_ENABLE=1, SHARP-capable switches). A note: it never makes the verdict \"NCCL failed\"."},
    {"sharp_init_failed", S::Info, M::Warn, "", "SHARP coll init error", "", -1,
     "The SHARP plugin could not start (SHARP coll init error): CollNet is not available",
     "The SHARP collective library could not create its job: the fabric has no SHARP aggregation "
     "manager (sharp_am), the switches or the cloud offering do not support SHARP, or the job's "
     "SHARP resources are exhausted. NCCL goes on without CollNet.",
     "If SHARP is expected, check sharp_am beside the subnet manager and the SHARP resource limits; "
     "otherwise set NCCL_COLLNET_ENABLE=0 (or leave the SHARP plugin out) to stop the attempt."},
    // --- Versions, plugins, setup
    {"version_mismatch", S::Fail, M::Warn, "", "Mismatched NCCL version", "", -1,
     "Ranks run different NCCL versions",
     "Nodes or containers load different libnccl builds (different images, a system NCCL shadowing "
     "the framework's, LD_LIBRARY_PATH differences).",
     "Use one NCCL build on every node; check which libnccl each rank loads (NCCL_DEBUG=VERSION)."},
    {"net_plugin_none", S::Fail, M::Warn, "", "Failed to initialize any NET plugin", "", -1,
     "No network plugin could be initialised",
     "Neither an external plugin nor the internal IB and Socket transports started: no usable NIC "
     "or interface.",
     "Check NCCL_NET / NCCL_NET_PLUGIN, NCCL_SOCKET_IFNAME and the NICs visible in this "
     "environment."},
    {"p2p_not_enabled", S::Info, M::Info, "Could not enable P2P", "", "", -1,
     "GPU peer-to-peer could not be enabled between local GPUs: they fall back to SHM",
     "The platform refuses P2P between these two GPUs: PCIe ACS redirecting peer traffic, an IOMMU or a "
     "virtual machine without P2P, GPUs on different CPU sockets, or consumer GPUs whose driver "
     "disables P2P. The ranks still run, over SHM (a copy through host memory: a fraction of NVLink "
     "or PCIe P2P bandwidth).",
     "If the GPUs should talk directly: disable ACS on the PCIe switches (fabscope check), set the "
     "IOMMU to passthrough (iommu=pt), pass P2P through in the VM; otherwise this is expected."},
    {"net_plugin_symbol_probe", S::Info, M::Info, "NET/Plugin", "Failed to find ncclNetPlugin", "", -1,
     "NCCL looked for a network plugin interface version the plugin (or its absence) does not offer",
     "NCCL probes the plugin library for each interface version it knows, newest first, and says so for "
     "each miss; with no plugin at all, or an older one, these lines are expected (nccl#1292).",
     "Nothing to do unless a plugin is expected: then check NCCL_NET_PLUGIN and that the plugin's version "
     "matches NCCL's."},
    {"net_plugin_load_failed", S::Warn, M::Info, "NET/Plugin", "undefined symbol", "", -1,
     "An external network plugin failed to load (undefined symbol)",
     "The libnccl-net plugin was built against other libraries than those present (a HPC-X, AWS OFI "
     "or SHARP plugin from another release), so NCCL falls back to its internal transports.",
     "Install the plugin release that matches the libraries on this node, or unset "
     "NCCL_NET_PLUGIN to use NCCL's own IB transport."},
    {"net_plugin_unsupported", S::Warn, M::Info, "External network plugin", "unsupported", "", -1,
     "The external network plugin's API version is not supported by this NCCL",
     "The plugin is older or newer than the plugin interface versions this NCCL accepts.",
     "Install a plugin release built for this NCCL version."},
    {"net_device_count_mismatch", S::Warn, M::Warn, "", "mixed local Net device counts", "", -1,
     "Ranks see different numbers of network devices",
     "Nodes are configured differently (a NIC down, NCCL_IB_HCA differing per node), which breaks "
     "rail-aligned rings.",
     "Make every node expose the same NICs (fabscope check); NCCL_IGNORE_NET_MISMATCH=1 only hides it."},
    {"gpu_shared_by_ranks", S::Fail, M::Warn, "", "Multiple Ranks are using the same GPU", "", -1,
     "Several ranks use the same GPU",
     "The launcher did not set one device per rank (LOCAL_RANK not used, CUDA_VISIBLE_DEVICES wrong).",
     "Call cuda.set_device(LOCAL_RANK) (or equivalent) before creating the communicator."},
    {"gpu_duplicate", S::Fail, M::Warn, "", "Duplicate GPU detected", "", -1,
     "Two ranks use the same GPU (Duplicate GPU detected)",
     "Several processes of one communicator selected the same CUDA device: the launcher did not "
     "give each rank its own GPU (LOCAL_RANK not used, CUDA_VISIBLE_DEVICES identical, a default "
     "device hard-coded), so NCCL refuses the communicator (ncclInvalidUsage).",
     "Give each local rank its own device (cuda.set_device(LOCAL_RANK), or one GPU per process in "
     "CUDA_VISIBLE_DEVICES) before creating the communicator."},
    {"rank_out_of_range", S::Fail, M::Warn, "", "Invalid rank requested", "", -1,
     "A process asked for a rank outside the communicator (Invalid rank requested)",
     "ncclCommInitRank got a rank that is not below nranks (\"Invalid rank requested : 7/4\"): the "
     "launcher started more processes than the world size it passed, or the ranks of a node are offset "
     "wrongly (RANK computed from a node rank and a local rank of another layout), so NCCL refuses it "
     "(ncclInvalidArgument).",
     "Launch exactly world-size processes (nproc_per_node x nnodes) and give each a distinct RANK "
     "below WORLD_SIZE; check the launcher's --gpus / --nproc_per_node against --world-size."},
    {"ib_collective_mismatch", S::Fail, M::Warn, "", "collective mismatch error", "", -1,
     "Two ranks disagree on a message size (NET/IB collective mismatch)",
     "The receiver posted a buffer of another size than the sender sent: ranks run different "
     "collectives or sizes, or are configured differently (NCCL versions, NCCL_PROTO/NCCL_ALGO or "
     "buffer-size variables set on some ranks only).",
     "Compare the environment and NCCL version of both ranks (fabscope log --hosts), then check that "
     "every rank issues the same collectives with the same counts."},
    {"collective_mismatch", S::Fail, M::Warn, "", "Mismatched collective detected", "", -1,
     "Ranks called different collectives (Mismatched collective detected)",
     "Some ranks enqueued collectives in another order or with other sizes than their peers (an "
     "application bug), as NCCL's check around the named rank found.",
     "Log the collectives (NCCL_DEBUG_SUBSYS=COLL) on every rank and compare around the rank named; "
     "make every rank issue the same collectives in the same order with the same counts."},
    {"message_truncated", S::Fail, M::Warn, "", "Message truncated", "", -1,
     "A rank received a different amount of data than it expected",
     "Ranks called collectives in a different order or with different sizes/dtypes (an application "
     "bug), or a rank from another job connected.",
     "Check that every rank issues the same collectives with the same counts (NCCL_DEBUG_SUBSYS=COLL)."},
    // --- Framework messages quoting an NCCL error (PyTorch ProcessGroupNCCL, nccl-tests)
    {"nccl_system_error", S::Fail, M::Framework, "", "unhandled system error", "", -1,
     "NCCL returned ncclSystemError (unhandled system error)",
     "A system call failed: most often a socket/network problem, /dev/shm exhaustion or a memlock "
     "limit; the NCCL WARN before it names the call.",
     "Rerun with NCCL_DEBUG=INFO and read the first WARN of the failing rank (this report lists it)."},
    {"nccl_remote_error", S::Fail, M::Framework, "", "remote process exited or there was a network error", "", -1,
     "NCCL returned ncclRemoteError",
     "A peer died or the network between the ranks failed (IB completion errors, closed sockets).",
     "Find the first failing rank's log; check the fabric for errors around that time."},
    {"nccl_invalid_usage", S::Fail, M::Framework, "", "invalid usage", "", -1,
     "NCCL returned ncclInvalidUsage",
     "A configuration or API error: a bad environment variable value (e.g. an interface filter that "
     "matches nothing), duplicate GPU use, mismatched ranks.",
     "Read the NCCL WARN just before it; it names the setting."},
    {"nccl_internal_error", S::Fail, M::Framework, "", "internal error", "", -1,
     "NCCL returned ncclInternalError",
     "NCCL hit an unexpected state, often as a consequence of a network or proxy failure on a peer.",
     "Read the first WARN of every rank; upgrade NCCL if no external cause is found."},
    {"nccl_unhandled_cuda_error", S::Fail, M::Framework, "", "unhandled cuda error", "", -1,
     "NCCL returned ncclUnhandledCudaError",
     "A CUDA call failed inside NCCL (out of memory, illegal address, driver problem).",
     "Read the 'Cuda failure' WARN before it; check dmesg for Xid errors."},
    {"comm_aborted", S::Fail, M::Framework, "", "communicator was aborted", "", -1,
     "The framework aborted the NCCL communicator",
     "A rank's error or timeout made the framework abort its communicators; the other ranks then fail "
     "with remote or socket errors.",
     "Find the first error before the abort (this report names it as the first cause)."},
    {"collective_timeout", S::Fail, M::Framework, "", "Watchdog caught collective operation timeout", "", -1,
     "A collective did not finish before the framework's timeout",
     "A rank hung or lagged (stuck data loader, a crashed peer, a network stall), so the others "
     "waited until PyTorch's watchdog fired.",
     "Find the rank that did not reach the collective (its log stops earlier); check the fabric for "
     "errors; TORCH_NCCL_ASYNC_ERROR_HANDLING and a shorter timeout make it fail faster."},
};

}  // namespace

std::span<const Signature> signatures() { return kSignatures; }

std::optional<int> completion_status(std::string_view m) {
  std::size_t p = m.find("Got completion");
  if (p == std::string_view::npos) return std::nullopt;
  std::string_view rest = m.substr(p);
  std::size_t k = rest.find("status=");
  std::size_t i;
  if (k != std::string_view::npos) {
    i = k + 7;
    if (i < rest.size() && !(rest[i] >= '0' && rest[i] <= '9')) {
      // 2.23+: "status=transport retry counter exceeded(12)"
      std::size_t open = rest.find('(', i);
      if (open == std::string_view::npos) return std::nullopt;
      i = open + 1;
    }
  } else {
    k = rest.find("with error ");  // before 2.19: "Got completion with error 12, opcode 1"
    if (k == std::string_view::npos) return std::nullopt;
    i = k + 11;
  }
  int v = 0, digits = 0;
  while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9' && digits < 4) {
    v = v * 10 + (rest[i++] - '0');
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  return v;
}

// The entries of each MatchOn, in catalog order: INFO lines that no cheap rule classified reach
// match_signature, so they must not walk the WARN entries. The strings' lengths are taken once.
//
// A WARN line is tried against every WARN entry, most of which name a substring anywhere in the
// message: one search per entry was a tenth of `fabscope log`. Instead the message's byte pairs
// are hashed once into a 4096-bit set, and an entry is searched for only when a few pairs of each
// of its strings (first, middle, last) are all in that set. Any string the message contains has
// every one of its pairs in the message, so the set only skips entries that cannot match.
constexpr std::size_t kPairBits = 4096;

inline std::uint32_t pair_hash(unsigned char a, unsigned char b) {
  return ((static_cast<std::uint32_t>(a) << 5) ^ b) & (kPairBits - 1);
}

// The set is stamped rather than cleared: a pair is in it when its stamp is this message's, so
// a message costs one pass over its bytes (clearing 512 bytes each time cost as much as the
// searches it saved). One per thread; the stamps are reset when the counter wraps.
struct PairSet {
  unsigned char stamp[kPairBits];
  unsigned char now = 0;
  void fill(std::string_view m) {
    if (++now == 0) {
      std::memset(stamp, 0, sizeof stamp);
      now = 1;
    }
    const auto* p = reinterpret_cast<const unsigned char*>(m.data());
    for (std::size_t i = 1; i < m.size(); ++i) stamp[pair_hash(p[i - 1], p[i])] = now;
  }
  bool has(std::uint32_t h) const { return stamp[h] == now; }
};

struct Compiled {
  const Signature* sig;
  std::string_view prefix, contains, contains2;
  std::uint16_t pairs[6];
  int npairs = 0;

  void add_pairs(std::string_view needle) {
    if (needle.size() < 2) return;
    const std::size_t last = needle.size() - 2;
    for (std::size_t at : {std::size_t{0}, last / 2, last}) {
      auto h = static_cast<std::uint16_t>(
          pair_hash(static_cast<unsigned char>(needle[at]), static_cast<unsigned char>(needle[at + 1])));
      if (std::find(pairs, pairs + npairs, h) == pairs + npairs) pairs[npairs++] = h;
    }
  }
  bool may_match(const PairSet& set) const {
    for (int i = 0; i < npairs; ++i)
      if (!set.has(pairs[i])) return false;
    return true;
  }
};

// Per level, the entries a message can match given its first byte: those whose prefix starts
// with it, and those without a prefix, in catalog order (an INFO line that reaches the catalog
// is tried against one or two entries instead of every one).
struct ByLevel {
  std::vector<Compiled> of[3];
  std::vector<const Compiled*> by_first[3][256];
  std::vector<const Compiled*> no_prefix[3];
  ByLevel() {
    for (const Signature& s : kSignatures) {
      Compiled c{&s, s.prefix, s.contains, s.contains2, {}, 0};
      c.add_pairs(c.contains);
      c.add_pairs(c.contains2);
      of[static_cast<int>(s.on)].push_back(c);
    }
    for (int l = 0; l < 3; ++l)
      for (const Compiled& c : of[l]) {
        if (c.prefix.empty()) no_prefix[l].push_back(&c);
        for (int b = 0; b < 256; ++b)
          if (c.prefix.empty() || static_cast<unsigned char>(c.prefix[0]) == b) by_first[l][b].push_back(&c);
      }
  }
};

const Signature* match_signature(MatchOn on, std::string_view message) {
  static const ByLevel by_level;
  const int level = static_cast<int>(on);
  std::optional<int> status;
  bool status_read = false;
  thread_local PairSet set{};
  bool filled = false;  // the set is filled at the first entry that needs a search
  const auto& candidates = message.empty() ? by_level.no_prefix[level]
                                           : by_level.by_first[level][static_cast<unsigned char>(message[0])];
  for (const Compiled* cp : candidates) {
    const Compiled& c = *cp;
    if (!c.prefix.empty() && !message.starts_with(c.prefix)) continue;
    if (c.npairs > 0 && on != MatchOn::Info) {  // INFO entries all have a prefix: rarely searched
      if (!filled) {
        set.fill(message);
        filled = true;
      }
      if (!c.may_match(set)) continue;
    }
    if (!core::contains(message, c.contains) || !core::contains(message, c.contains2)) continue;
    const Signature& s = *c.sig;
    if (s.wc_status >= 0) {
      if (!status_read) {
        status = completion_status(message);
        status_read = true;
      }
      if (!status || *status != s.wc_status) continue;
    }
    return &s;
  }
  return nullptr;
}

const Signature* completion_signature(int wc_status) {
  if (wc_status == 0) return nullptr;
  const Signature* generic = nullptr;
  for (const Signature& s : kSignatures) {
    if (s.on != MatchOn::Warn || std::strcmp(s.contains, "Got completion") != 0) continue;
    if (s.wc_status == wc_status) return &s;
    if (s.wc_status < 0 && !generic) generic = &s;
  }
  return generic;
}

const char* nccl_result_name(long code) {
  // ncclResult_t, nccl.h.
  static const char* const kNames[] = {"ncclSuccess",       "ncclUnhandledCudaError",
                                       "ncclSystemError",   "ncclInternalError",
                                       "ncclInvalidArgument", "ncclInvalidUsage",
                                       "ncclRemoteError",   "ncclInProgress"};
  if (code < 0 || code >= static_cast<long>(sizeof kNames / sizeof kNames[0])) return "?";
  return kNames[code];
}

}  // namespace fabscope::nccllog
