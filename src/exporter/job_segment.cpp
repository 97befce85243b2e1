#include "exporter/job_segment.hpp"

#include <cstddef>
#include <cstring>

#include "core/error.hpp"
#include "segment.h"

namespace fabscope::exporter {

static_assert(sizeof(fsp_header) == FSP_HEADER_BYTES, "fsp_header layout");
static_assert(sizeof(fsp_agg) == FSP_AGG_BYTES, "fsp_agg layout");
static_assert(sizeof(fsp_ring_entry) == FSP_RING_ENTRY_BYTES, "fsp_ring_entry layout");
static_assert(sizeof(fsp_peer) == FSP_PEER_BYTES, "fsp_peer layout");
static_assert(offsetof(fsp_comm, aggs) == FSP_COMM_HEAD_BYTES, "fsp_comm layout");
static_assert(FSP_HIST_BUCKETS == kJobHistBuckets, "histogram buckets");

namespace {

[[noreturn]] void refuse(std::string_view source, std::string_view field, std::uint64_t value, std::string_view why) {
  throw Error(std::string(source) + ": " + std::string(field) + " " + std::to_string(value) + ": " + std::string(why));
}

std::string text(const char* p, std::size_t cap) {
  std::size_t n = strnlen(p, cap);
  std::string s(p, n);
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  return s;
}

template <typename T>
T load(const char* base, std::size_t off) {
  T v;
  std::memcpy(&v, base + off, sizeof v);  // the copy may be unaligned for T
  return v;
}

}  // namespace

const char* job_op_name(unsigned op) {
  static const char* const names[FSP_OP_COUNT] = {"other",     "AllReduce", "AllGather", "ReduceScatter",
                                                  "Broadcast", "Reduce",    "Send",      "Recv",
                                                  "AlltoAll",  "Gather",    "Scatter"};
  return op < FSP_OP_COUNT ? names[op] : "other";
}

const char* job_algo_name(unsigned algo) {
  static const char* const names[] = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
  return algo < sizeof names / sizeof names[0] ? names[algo] : "";
}

const char* job_proto_name(unsigned proto) {
  static const char* const names[] = {"LL", "LL128", "SIMPLE"};
  return proto < 3 ? names[proto] : "";
}

std::string JobComm::hash_hex() const {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

std::size_t job_segment_bytes() { return sizeof(fsp_segment); }

JobSegment parse_job_segment(std::string_view bytes, std::string_view source) {
  if (bytes.size() < sizeof(fsp_header)) refuse(source, "size", bytes.size(), "shorter than the segment's header");
  const char* base = bytes.data();
  fsp_header h;
  std::memcpy(&h, base, sizeof h);
  if (h.magic != FSP_MAGIC) refuse(source, "magic", h.magic, "not a fabscope profiler segment");
  if (h.version != FSP_VERSION) refuse(source, "version", h.version, "this exporter reads version 1");
  if (h.header_bytes != sizeof(fsp_header)) refuse(source, "header_bytes", h.header_bytes, "not version 1's");
  if (h.max_comms != FSP_MAX_COMMS) refuse(source, "max_comms", h.max_comms, "not version 1's");
  if (h.comm_bytes != sizeof(fsp_comm)) refuse(source, "comm_bytes", h.comm_bytes, "not version 1's");
  if (h.aggs_per_comm != FSP_AGGS_PER_COMM) refuse(source, "aggs_per_comm", h.aggs_per_comm, "not version 1's");
  if (h.ring_len != FSP_RING_LEN) refuse(source, "ring_len", h.ring_len, "not version 1's");
  if (h.peers_per_comm != FSP_PEERS_PER_COMM) refuse(source, "peers_per_comm", h.peers_per_comm, "not version 1's");
  if (h.hist_buckets != FSP_HIST_BUCKETS) refuse(source, "hist_buckets", h.hist_buckets, "not version 1's");
  if (h.total_bytes != sizeof(fsp_segment)) refuse(source, "total_bytes", h.total_bytes, "not version 1's");
  if (bytes.size() != sizeof(fsp_segment)) refuse(source, "size", bytes.size(), "not the header's total_bytes (truncated or grown)");
  if (h.pid <= 0) refuse(source, "pid", static_cast<std::uint64_t>(static_cast<std::int64_t>(h.pid)), "not a process id");
  if (h.comms_used > FSP_MAX_COMMS) refuse(source, "comms_used", h.comms_used, "more than the segment's slots");

  JobSegment s;
  s.pid = h.pid;
  s.uid = h.uid;
  s.start_ticks = h.start_ticks;
  s.created_unix_ns = h.created_unix_ns;
  s.api_version = h.api_version;
  s.proxy = (h.flags & FSP_FLAG_PROXY) != 0;
  s.finalized = (h.flags & FSP_FLAG_FINALIZED) != 0;
  s.host = text(h.host, sizeof h.host);
  s.job_id = text(h.job_id, sizeof h.job_id);
  s.job_source = text(h.job_source, sizeof h.job_source);
  s.plugin_version = text(h.plugin_version, sizeof h.plugin_version);
  s.comms_overflow = h.comms_overflow;
  s.events_dropped = h.events_dropped;
  s.events_invalid = h.events_invalid;
  s.aggs_overflow = h.aggs_overflow;

  for (std::uint64_t i = 0; i < h.comms_used; i++) {
    const std::size_t off = offsetof(fsp_segment, comms) + i * sizeof(fsp_comm);
    const char* cb = base + off;
    const auto state = load<std::uint32_t>(cb, offsetof(fsp_comm, state));
    if (state == 0 || state == 1) continue;  // free, or being filled
    if (state > 3) refuse(source, "comms[" + std::to_string(i) + "].state", state, "not 0-3");
    JobComm c;
    c.slot = static_cast<int>(i);
    c.finalized = state == 3;
    c.hash = load<std::uint64_t>(cb, offsetof(fsp_comm, comm_hash));
    c.name = text(cb + offsetof(fsp_comm, name), FSP_STR);
    c.bus_id = text(cb + offsetof(fsp_comm, bus_id), 16);
    c.rank = load<std::int32_t>(cb, offsetof(fsp_comm, rank));
    c.nranks = load<std::int32_t>(cb, offsetof(fsp_comm, nranks));
    c.nnodes = load<std::int32_t>(cb, offsetof(fsp_comm, nnodes));
    c.cuda_device = load<std::int32_t>(cb, offsetof(fsp_comm, cuda_device));
    const std::string field = "comms[" + std::to_string(i) + "]";
    if (c.nranks <= 0 || c.nranks > (1 << 24)) refuse(source, field + ".nranks", static_cast<std::uint32_t>(c.nranks), "not 1 to 2^24");
    if (c.rank < 0 || c.rank >= c.nranks) refuse(source, field + ".rank", static_cast<std::uint32_t>(c.rank), "not below nranks");
    if (c.nnodes < 0 || c.nnodes > c.nranks) refuse(source, field + ".nnodes", static_cast<std::uint32_t>(c.nnodes), "not 0 to nranks");
    c.init_unix_ns = load<std::uint64_t>(cb, offsetof(fsp_comm, init_unix_ns));
    c.started = load<std::uint64_t>(cb, offsetof(fsp_comm, started));
    c.completed = load<std::uint64_t>(cb, offsetof(fsp_comm, completed));
    c.last_start_unix_ns = load<std::uint64_t>(cb, offsetof(fsp_comm, last_start_unix_ns));
    c.last_done_unix_ns = load<std::uint64_t>(cb, offsetof(fsp_comm, last_done_unix_ns));
    for (int k = 0; k < 16; k++) {
      c.op_started_seq[k] = load<std::uint64_t>(cb, offsetof(fsp_comm, op_started_seq) + 8 * k);
      c.op_done_seq[k] = load<std::uint64_t>(cb, offsetof(fsp_comm, op_done_seq) + 8 * k);
    }
    for (int a = 0; a < FSP_AGGS_PER_COMM; a++) {
      fsp_agg raw;
      std::memcpy(&raw, cb + offsetof(fsp_comm, aggs) + a * sizeof(fsp_agg), sizeof raw);
      if (raw.key == 0) continue;
      const std::uint32_t k = raw.key - 1;
      JobAgg g;
      g.op = k >> 8;
      g.size_class = k & 0xff;
      if (g.op >= FSP_OP_COUNT || g.size_class > 64 || (k >> 16) != 0)
        refuse(source, field + ".aggs[" + std::to_string(a) + "].key", raw.key, "not an (op, size) of version 1");
      g.count = raw.count;
      g.bytes = raw.bytes;
      g.time_ns_sum = raw.time_ns_sum;
      g.gpu_timed = raw.gpu_timed;
      g.timed_bytes = raw.timed_bytes;
      for (int b = 0; b < kJobHistBuckets; b++) g.hist[b] = raw.hist[b];
      c.aggs.push_back(g);
    }
    const auto ring_next = load<std::uint64_t>(cb, offsetof(fsp_comm, ring_next));
    const std::uint64_t n = ring_next < FSP_RING_LEN ? ring_next : FSP_RING_LEN;
    for (std::uint64_t r = ring_next - n; r < ring_next; r++) {
      fsp_ring_entry e;
      std::memcpy(&e, cb + offsetof(fsp_comm, ring) + (r % FSP_RING_LEN) * sizeof(fsp_ring_entry), sizeof e);
      if (e.lock == 0 || (e.lock & 1)) continue;  // never written, or caught while written
      if (e.op >= FSP_OP_COUNT) refuse(source, field + ".ring.op", e.op, "not an op of version 1");
      JobOp o;
      o.seq = e.seq;
      o.bytes = e.bytes;
      o.cpu_start_unix_ns = e.cpu_start_unix_ns;
      o.gpu_start_ns = e.gpu_start_ns;
      o.gpu_stop_ns = e.gpu_stop_ns;
      o.done_unix_ns = e.done_unix_ns;
      o.op = e.op;
      o.algo = e.algo;
      o.proto = e.proto;
      o.nchannels = e.nchannels;
      o.peer = e.peer;
      c.ring.push_back(o);
    }
    for (int p = 0; p < FSP_PEERS_PER_COMM; p++) {
      fsp_peer raw;
      std::memcpy(&raw, cb + offsetof(fsp_comm, peers) + p * sizeof(fsp_peer), sizeof raw);
      if (raw.key == 0) continue;
      const std::uint32_t k = raw.key - 1;
      JobPeer e;
      e.peer = static_cast<int>(k >> 1);
      e.send = (k & 1) != 0;
      if (e.peer >= c.nranks) refuse(source, field + ".peers.peer", static_cast<std::uint32_t>(e.peer), "not below nranks");
      e.steps = raw.steps;
      e.bytes = raw.bytes;
      e.step_ns_sum = raw.step_ns_sum;
      e.wait_ns_sum = raw.wait_ns_sum;
      c.peers.push_back(e);
    }
    s.comms.push_back(std::move(c));
  }
  return s;
}

}  // namespace fabscope::exporter
