#pragma once
// A running job's profiler segment (plugins/nccl-profiler/segment.h) decoded into values: what one
// process of the job published. parse_job_segment is pure over the bytes and trusts none of them:
// every size, count, index and string is checked, and a segment that fails is refused whole with
// the field and value named (docs/job.md "The segment").
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fabscope::exporter {

inline constexpr int kJobHistBuckets = 32;  // bucket i: duration < 2^i µs

// "AllReduce", ... for the segment's op numbers (FSP_OP_*); "other" outside them.
const char* job_op_name(unsigned op);
const char* job_algo_name(unsigned algo);    // NCCL's names, "" when unknown
const char* job_proto_name(unsigned proto);  // "LL", "LL128", "SIMPLE", "" when unknown

struct JobAgg {
  unsigned op = 0;
  unsigned size_class = 0;  // bytes < 2^size_class and >= 2^(size_class-1); 0: zero bytes
  std::uint64_t count = 0, bytes = 0, time_ns_sum = 0, gpu_timed = 0;
  std::uint64_t timed_bytes = 0;  // bytes of the operations that have a time
  std::array<std::uint64_t, kJobHistBuckets> hist{};
  // The smallest message size of the class, in bytes ("1048576" for 1-2 MiB).
  std::uint64_t size_lower_bytes() const { return size_class == 0 ? 0 : 1ull << (size_class - 1); }
};

struct JobOp {  // one entry of the ring of recent operations
  std::uint64_t seq = 0, bytes = 0, cpu_start_unix_ns = 0, gpu_start_ns = 0, gpu_stop_ns = 0, done_unix_ns = 0;
  unsigned op = 0, algo = 255, proto = 255, nchannels = 0;
  int peer = -1;
  bool in_flight() const { return done_unix_ns == 0; }
  // GPU time where both stamps are there, else 0.
  std::uint64_t gpu_ns() const { return gpu_stop_ns > gpu_start_ns && gpu_start_ns ? gpu_stop_ns - gpu_start_ns : 0; }
};

struct JobPeer {  // network steps to or from one peer (FABSCOPE_PROFILER_PROXY=1)
  int peer = 0;
  bool send = false;
  std::uint64_t steps = 0, bytes = 0, step_ns_sum = 0, wait_ns_sum = 0;
};

struct JobComm {
  int slot = 0;
  bool finalized = false;
  std::uint64_t hash = 0;
  std::string name, bus_id;
  int rank = 0, nranks = 0, nnodes = 0, cuda_device = -1;
  std::uint64_t init_unix_ns = 0, started = 0, completed = 0, last_start_unix_ns = 0, last_done_unix_ns = 0;
  std::array<std::uint64_t, 16> op_started_seq{}, op_done_seq{};  // highest seq + 1 per op
  std::vector<JobAgg> aggs;
  std::vector<JobOp> ring;  // oldest first; entries caught while written are left out
  std::vector<JobPeer> peers;
  std::string hash_hex() const;  // 16 hex digits
};

struct JobSegment {
  int pid = 0;
  std::uint32_t uid = 0;
  std::uint64_t start_ticks = 0, created_unix_ns = 0;
  unsigned api_version = 0;
  bool proxy = false, finalized = false;
  std::string host, job_id, job_source, plugin_version;
  std::uint64_t comms_overflow = 0, events_dropped = 0, events_invalid = 0, aggs_overflow = 0;
  std::vector<JobComm> comms;  // active and finalized slots, in slot order
};

// The segment's size for the version this build writes.
std::size_t job_segment_bytes();

// Decodes a segment read whole. Throws fabscope::Error "<source>: <field> <value>: <why>" when the
// magic, version, a size, a count or an index is not what version 1 allows. Strings keep printable
// ASCII; other bytes become '?'.
JobSegment parse_job_segment(std::string_view bytes, std::string_view source);

}  // namespace fabscope::exporter
