#include "exporter/families.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include "probe/note.hpp"

namespace fabscope::exporter {

const std::vector<KnownCounter>& known_counters() {
  // Names and meanings follow the IBA PortCounters / PortCountersExtended attributes that the
  // kernel exposes under ports/<n>/counters (drivers/infiniband/core/sysfs.c).
  static const std::vector<KnownCounter> table = {
      {"port_xmit_data", "fabscope_port_data_transmitted_bytes_total",
       "Data bytes transmitted on the port (the kernel counts 4-byte words; converted to bytes)."},
      {"port_rcv_data", "fabscope_port_data_received_bytes_total",
       "Data bytes received on the port (the kernel counts 4-byte words; converted to bytes)."},
      {"port_xmit_packets", "fabscope_port_packets_transmitted_total", "Packets transmitted on the port."},
      {"port_rcv_packets", "fabscope_port_packets_received_total", "Packets received on the port."},
      {"unicast_xmit_packets", "fabscope_port_unicast_packets_transmitted_total",
       "Unicast packets transmitted on the port."},
      {"unicast_rcv_packets", "fabscope_port_unicast_packets_received_total",
       "Unicast packets received on the port."},
      {"multicast_xmit_packets", "fabscope_port_multicast_packets_transmitted_total",
       "Multicast packets transmitted on the port."},
      {"multicast_rcv_packets", "fabscope_port_multicast_packets_received_total",
       "Multicast packets received on the port."},
      {"symbol_error", "fabscope_port_symbol_errors_total",
       "Minor link errors detected on one or more physical lanes (saturates at 65535)."},
      {"link_error_recovery", "fabscope_port_link_error_recoveries_total",
       "Times the link error recovery process completed successfully."},
      {"link_downed", "fabscope_port_link_downed_total",
       "Times the link error recovery process failed and the link went down."},
      {"port_rcv_errors", "fabscope_port_receive_errors_total", "Packets received with errors."},
      {"port_rcv_remote_physical_errors", "fabscope_port_receive_remote_physical_errors_total",
       "Packets received marked with the EBP delimiter (bad at the sender)."},
      {"port_rcv_switch_relay_errors", "fabscope_port_receive_switch_relay_errors_total",
       "Packets received that a switch could not relay."},
      {"port_xmit_discards", "fabscope_port_transmit_discards_total",
       "Outbound packets discarded because the port was down or congested."},
      {"port_xmit_constraint_errors", "fabscope_port_transmit_constraint_errors_total",
       "Packets not transmitted because of outbound raw filtering or partition checks."},
      {"port_rcv_constraint_errors", "fabscope_port_receive_constraint_errors_total",
       "Packets received and discarded because of inbound raw filtering or partition checks."},
      {"local_link_integrity_errors", "fabscope_port_local_link_integrity_errors_total",
       "Times the local physical errors exceeded the LocalPhyErrors threshold."},
      {"excessive_buffer_overrun_errors", "fabscope_port_excessive_buffer_overrun_errors_total",
       "Times consecutive flow control update periods had buffer overruns."},
      {"VL15_dropped", "fabscope_port_vl15_dropped_total",
       "Incoming VL15 (subnet management) packets dropped for lack of buffers."},
      {"port_xmit_wait", "fabscope_port_transmit_wait_ticks_total",
       "Ticks during which the port had data to send but no flow-control credits (congestion); "
       "the tick length is the device's."},
  };
  return table;
}

namespace {

// hw_counters/lifespan is not a counter: it sets how long (ms) the driver caches the hardware
// statistics (drivers/infiniband/core/sysfs.c, "lifespan" attribute).
bool is_hw_counter(const std::string& name) { return name != "lifespan"; }

Labels port_labels(const RdmaDevice& d, const RdmaPort& p) {
  return {{"device", d.name}, {"port", std::to_string(p.port)}};
}

Labels with(Labels base, const char* key, const std::string& value) {
  base.emplace_back(key, value);
  return base;
}

}  // namespace

std::vector<MetricFamily> port_families(const std::vector<RdmaDevice>& devices) {
  const auto& known = known_counters();
  std::vector<MetricFamily> fams;
  fams.reserve(known.size() + 6);
  for (const auto& k : known) fams.push_back({k.metric, MetricType::Counter, k.help, {}});
  MetricFamily other{"fabscope_port_extra_events_total", MetricType::Counter,
                     "A counters/* file of the port without a metric of its own (label counter = file "
                     "name).", {}};
  MetricFamily hw{"fabscope_port_hw_events_total", MetricType::Counter,
                  "A hw_counters/* file of the port: driver statistics such as RoCE congestion "
                  "(np_cnp_sent, rp_cnp_handled, np_ecn_marked_roce_packets) and retransmission "
                  "(out_of_sequence, packet_seq_err, local_ack_timeout_err) counters.", {}};
  MetricFamily state{"fabscope_port_state", MetricType::Gauge,
                     "Logical port state code: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER.", {}};
  MetricFamily phys{"fabscope_port_physical_state", MetricType::Gauge,
                    "Physical port state code: 1 Sleep, 2 Polling, 3 Disabled, 4 "
                    "PortConfigurationTraining, 5 LinkUp, 6 LinkErrorRecovery, 7 PhyTest.", {}};
  MetricFamily rate{"fabscope_port_rate_bytes_per_second", MetricType::Gauge,
                    "Data rate the port negotiated (width times lane speed, as the kernel reports it in Gb/s), "
                    "in bytes per second, so that utilisation is rate(data bytes) divided by it.", {}};
  MetricFamily info{"fabscope_port_info", MetricType::Gauge,
                    "Constant 1, labelled with the port's adapter, firmware, link layer and netdev.", {}};

  for (const auto& d : devices) {
    for (const auto& p : d.ports) {
      Labels base = port_labels(d, p);
      for (const auto& [name, value] : p.counters) {
        // Captured by an explicit reference: clang before 16 cannot capture a structured binding.
        auto it = std::find_if(known.begin(), known.end(),
                               [&file = name](const KnownCounter& k) { return file == k.file; });
        if (it != known.end()) fams[it - known.begin()].samples.push_back(Sample::of_u64(base, value));
        else other.samples.push_back(Sample::of_u64(with(base, "counter", name), value));
      }
      for (const auto& [name, value] : p.hw_counters)
        if (is_hw_counter(name)) hw.samples.push_back(Sample::of_u64(with(base, "counter", name), value));
      if (p.state_code) state.samples.push_back(Sample::of(base, *p.state_code));
      if (p.phys_state_code) phys.samples.push_back(Sample::of(base, *p.phys_state_code));
      if (p.rate_gbps) rate.samples.push_back(Sample::of(base, *p.rate_gbps * 1e9 / 8));
      Labels il = base;
      il.emplace_back("hca_type", d.hca_type);
      il.emplace_back("fw_ver", d.fw_ver);
      il.emplace_back("board_id", d.board_id);
      il.emplace_back("link_layer", p.link_layer);
      il.emplace_back("netdev", p.netdev);
      info.samples.push_back(Sample::of(std::move(il), 1));
    }
  }
  fams.push_back(std::move(other));
  fams.push_back(std::move(hw));
  fams.push_back(std::move(state));
  fams.push_back(std::move(phys));
  fams.push_back(std::move(rate));
  fams.push_back(std::move(info));
  return fams;
}

MetricFamily netdev_mtu_family(const std::map<std::string, int>& mtu_bytes) {
  MetricFamily f{"fabscope_netdev_mtu_bytes", MetricType::Gauge,
                 "MTU of a netdev that carries an RDMA port (RoCE or IPoIB), in bytes.", {}};
  for (const auto& [name, mtu] : mtu_bytes) f.samples.push_back(Sample::of({{"netdev", name}}, mtu));
  return f;
}

std::vector<MetricFamily> node_families(const NodeFacts& facts) {
  std::vector<MetricFamily> fams;
  MetricFamily gpus{"fabscope_node_gpus", MetricType::Gauge,
                    "GPUs found on the node (PCI display/3D controllers, or NVML).", {}};
  if (facts.gpus) gpus.samples.push_back(Sample::of({}, *facts.gpus));
  MetricFamily peer{"fabscope_node_peermem_loaded", MetricType::Gauge,
                    "1 when a GPUDirect RDMA peer-memory module (nvidia_peermem or nv_peer_mem) is "
                    "loaded, else 0.", {}};
  if (facts.peermem_loaded) peer.samples.push_back(Sample::of({}, *facts.peermem_loaded ? 1 : 0));
  fams.push_back(std::move(gpus));
  fams.push_back(std::move(peer));
  for (auto& f : nvlink_families(facts.gpu_links, facts.gpu_topology)) fams.push_back(std::move(f));
  return fams;
}

std::vector<MetricFamily> nvlink_families(const std::vector<Gpu>& gpus, const std::vector<GpuPair>& pairs) {
  MetricFamily up{"fabscope_gpu_nvlink_up", MetricType::Gauge,
                  "1 when the GPU's NVLink is active, 0 when NVML lists it down (nvmlDeviceGetNvLinkState).", {}};
  MetricFamily info{"fabscope_gpu_nvlink_info", MetricType::Gauge,
                    "Always 1: an NVLink's version (NVML's code: 6 is NVLink 4.0), what its other end is "
                    "(gpu, switch, ibmnpu, unknown) and, for a GPU, its PCI address.", {}};
  MetricFamily errors{"fabscope_gpu_nvlink_errors_total", MetricType::Counter,
                      "NVLink error counters since the driver loaded (nvmlDeviceGetNvLinkErrorCounter), by "
                      "error: replay, recovery, crc_flit (the three of nvidia-smi nvlink -e), crc_data, "
                      "ecc_data (corrected; they move on healthy links under load).", {}};
  MetricFamily tx{"fabscope_gpu_nvlink_data_transmitted_bytes_total", MetricType::Counter,
                  "Payload bytes the GPU sent on the NVLink (NVML field 138 THROUGHPUT_DATA_TX scoped to the "
                  "link; KiB in NVML).", {}};
  MetricFamily rx{"fabscope_gpu_nvlink_data_received_bytes_total", MetricType::Counter,
                  "Payload bytes the GPU received on the NVLink (NVML field 139 THROUGHPUT_DATA_RX scoped to "
                  "the link; KiB in NVML).", {}};
  MetricFamily all_tx{"fabscope_gpu_nvlinks_transmitted_bytes_total", MetricType::Counter,
                      "Bytes the GPU sent over all its NVLinks: traffic=\"data\" the payload (NVML field "
                      "138), traffic=\"raw\" with protocol overhead (field 140).", {}};
  MetricFamily all_rx{"fabscope_gpu_nvlinks_received_bytes_total", MetricType::Counter,
                      "Bytes the GPU received over all its NVLinks: traffic=\"data\" the payload (NVML "
                      "field 139), traffic=\"raw\" with protocol overhead (field 141).", {}};
  MetricFamily pair{"fabscope_gpu_pair_nvlinks", MetricType::Gauge,
                    "NVLinks joining two GPUs (0: they reach each other over PCIe), with the level "
                    "nvidia-smi topo -m prints for the pair (NV18, PIX, PXB, PHB, NODE, SYS).", {}};
  for (const auto& g : gpus) {
    for (const auto& l : g.nvlinks) {
      const Labels at{{"gpu", g.pci_address}, {"link", std::to_string(l.link)}};
      if (l.active) up.samples.push_back(Sample::of(at, *l.active ? 1 : 0));
      Labels il = at;
      il.emplace_back("version", l.version_code ? std::to_string(*l.version_code) : "");
      il.emplace_back("remote_type", l.remote_type);
      il.emplace_back("remote_gpu", l.remote_pci_address);
      info.samples.push_back(Sample::of(il, 1));
      for (auto [name, v] : {std::pair{"replay", &l.replay_errors}, std::pair{"recovery", &l.recovery_errors},
                             std::pair{"crc_flit", &l.crc_flit_errors}, std::pair{"crc_data", &l.crc_data_errors},
                             std::pair{"ecc_data", &l.ecc_data_errors}})
        if (*v) {
          Labels el = at;
          el.emplace_back("error", name);
          errors.samples.push_back(Sample::of_u64(el, **v));
        }
      if (l.data_transmitted_bytes) tx.samples.push_back(Sample::of_u64(at, *l.data_transmitted_bytes));
      if (l.data_received_bytes) rx.samples.push_back(Sample::of_u64(at, *l.data_received_bytes));
    }
    for (auto [fam, traffic, v] :
         {std::tuple{&all_tx, "data", &g.nvlink_data_transmitted_bytes}, std::tuple{&all_tx, "raw", &g.nvlink_raw_transmitted_bytes},
          std::tuple{&all_rx, "data", &g.nvlink_data_received_bytes}, std::tuple{&all_rx, "raw", &g.nvlink_raw_received_bytes}})
      if (*v) fam->samples.push_back(Sample::of_u64({{"gpu", g.pci_address}, {"traffic", traffic}}, **v));
  }
  for (const auto& p : pairs)
    if (p.nvlinks && !p.level.empty())
      pair.samples.push_back(Sample::of({{"gpu_a", p.gpu_a}, {"gpu_b", p.gpu_b}, {"level", p.level}}, *p.nvlinks));
  std::vector<MetricFamily> fams;
  for (auto* f : {&up, &info, &errors, &tx, &rx, &all_tx, &all_rx, &pair}) fams.push_back(std::move(*f));
  return fams;
}

int check_status(Severity worst) {
  switch (worst) {
    case Severity::Warn: return 1;
    case Severity::Fail: return 2;
    default: return 0;
  }
}

std::vector<MetricFamily> check_families(const CheckResults& results) {
  std::map<std::string, Severity> worst;
  for (const auto& id : results.ids) worst.emplace(id, Severity::Ok);
  for (const auto& f : results.findings) {
    auto [it, fresh] = worst.emplace(f.id, f.severity);
    if (!fresh && f.severity > it->second) it->second = f.severity;
  }
  MetricFamily status{"fabscope_check_status", MetricType::Gauge,
                      "Verdict of a fabscope check (label check = its id, see docs/checks.md): 0 ok, "
                      "1 warn, 2 fail; the worst over the subjects it judged.", {}};
  for (const auto& [id, sev] : worst) status.samples.push_back(Sample::of({{"check", id}}, check_status(sev)));
  std::vector<MetricFamily> fams;
  fams.push_back(std::move(status));
  if (results.timestamp_seconds > 0) {
    fams.push_back({"fabscope_checks_last_run_timestamp_seconds", MetricType::Gauge,
                    "Unix time at which the checks last ran (they run on their own interval, not "
                    "on every scrape).", {Sample::of({}, results.timestamp_seconds)}});
    fams.push_back({"fabscope_checks_duration_seconds", MetricType::Gauge,
                    "Time the last full probe and checks took, in seconds.",
                    {Sample::of({}, results.duration_seconds)}});
  }
  return fams;
}

std::vector<MetricFamily> self_families(const SelfStats& s) {
  std::vector<MetricFamily> fams;
  fams.push_back({"fabscope_scrape_duration_seconds", MetricType::Gauge,
                  "Time this scrape took to read sysfs and build the metrics, in seconds.",
                  {Sample::of({}, s.scrape_duration_seconds)}});
  MetricFamily errors{"fabscope_scrape_errors_total", MetricType::Counter,
                      "Problems met while scraping, by reason: read (a file vanished while being "
                      "read, or a value could not be read that was not already unread: see "
                      "fabscope_values_unread), counter_backwards (a counter reset or wrapped), checks "
                      "(the full probe or the checks failed). The scrape still succeeds.", {}};
  std::map<std::string, std::uint64_t> all{{kErrorRead, 0}, {kErrorCounterBackwards, 0}, {kErrorChecks, 0}};
  for (const auto& [k, v] : s.scrape_errors_total) all[k] = v;
  for (const auto& [k, v] : all) errors.samples.push_back(Sample::of_u64({{"reason", k}}, v));
  fams.push_back(std::move(errors));
  MetricFamily problems{"fabscope_scrape_read_problems_total", MetricType::Counter,
                        "The read errors of fabscope_scrape_errors_total by kind of problem: missing, "
                        "unreadable, empty, not_text, bad_value (garbage), removed (a device or file "
                        "vanished while being read). Each distinct problem is logged once to stderr.", {}};
  std::map<std::string, std::uint64_t> kinds;
  for (auto k : {probe::NoteKind::Missing, probe::NoteKind::Unreadable, probe::NoteKind::Empty,
                 probe::NoteKind::NotText, probe::NoteKind::BadValue, probe::NoteKind::Removed})
    kinds[probe::to_string(k)] = 0;
  for (const auto& [k, v] : s.read_problems_total) kinds[k] = v;
  for (const auto& [k, v] : kinds) problems.samples.push_back(Sample::of_u64({{"kind", k}}, v));
  fams.push_back(std::move(problems));
  MetricFamily unread{"fabscope_values_unread", MetricType::Gauge,
                      "Values the exporter could not read at their latest reading, by kind of problem: "
                      "missing, unreadable, empty, not_text, bad_value (garbage). A value that stays "
                      "unread (an empty fw_ver) stays here; it is counted in "
                      "fabscope_scrape_errors_total only when it joins. Each is logged once to stderr.", {}};
  std::map<std::string, std::uint64_t> unread_kinds;
  for (auto k : {probe::NoteKind::Missing, probe::NoteKind::Unreadable, probe::NoteKind::Empty,
                 probe::NoteKind::NotText, probe::NoteKind::BadValue})
    unread_kinds[probe::to_string(k)] = 0;
  for (const auto& [k, v] : s.values_unread) unread_kinds[k] = v;
  for (const auto& [k, v] : unread_kinds) unread.samples.push_back(Sample::of_u64({{"kind", k}}, v));
  fams.push_back(std::move(unread));
  fams.push_back({"fabscope_http_requests_total", MetricType::Counter,
                  "HTTP requests answered with 2xx.", {Sample::of_u64({}, s.http_requests_total)}});
  fams.push_back({"fabscope_http_rejected_total", MetricType::Counter,
                  "HTTP requests or connections refused: bad method, unknown path, oversize or "
                  "malformed request, timeout.", {Sample::of_u64({}, s.http_rejected_total)}});
  fams.push_back({"fabscope_http_connections_evicted_total", MetricType::Counter,
                  "Connections closed to make room when the connection limit was reached (the "
                  "oldest one still without a complete request goes first).",
                  {Sample::of_u64({}, s.http_connections_evicted_total)}});
  fams.push_back({"fabscope_http_connections_open", MetricType::Gauge, "HTTP connections open now.",
                  {Sample::of_u64({}, s.http_connections_open)}});
  fams.push_back({"fabscope_build_info", MetricType::Gauge,
                  "Constant 1, labelled with the fabscope version.", {Sample::of({{"version", s.version}}, 1)}});
  return fams;
}

}  // namespace fabscope::exporter
