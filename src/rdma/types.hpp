#pragma once
// fabscope rdma: the value types of the point-to-point engine (options, the endpoint each side
// chose, per-size results) and their JSON. The JSON of Result is the "fabscope.rdma" schema
// (docs/formats.md); the control protocol between the two sides carries the same values.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/finding.hpp"
#include "core/json.hpp"

namespace fabscope::rdma {

enum class Test { Bw, Lat };
enum class Op { Write, Read, Send };
// How the two sides connect their queue pairs: RDMA CM (what NCCL and most RDMA software use)
// or an exchange of QP numbers, PSNs and GIDs over the TCP control connection (perftest's
// default). The control connection (parameters, buffer keys, results) is TCP in both modes.
enum class Oob { Cm, Tcp };

const char* to_string(Test t);
const char* to_string(Op o);
const char* to_string(Oob o);
Test test_from_string(const std::string& s);  // throw UsageError naming the value
Op op_from_string(const std::string& s);
Oob oob_from_string(const std::string& s);

// What the client asks for; the server takes the measurement parameters from the client's
// hello, and only the local overrides (device, port, GID index) from its own options.
struct Options {
  Test test = Test::Bw;
  Op op = Op::Write;
  std::vector<std::uint64_t> sizes_bytes;  // empty: 65536 (bw) or 2 (lat), as perftest
  std::uint64_t iterations = 0;            // per QP and size; 0: 5000 (bw) or 1000 (lat)
  std::optional<double> duration_s;        // -D: time-bound instead of iterations
  int qps = 1;                             // -q
  int tx_depth = 0;                        // -t; 0: 128 (bw) or 1 (lat)
  bool bidirectional = false;              // -b (bw only)
  Oob oob = Oob::Cm;
  int tcp_port = 18515;                    // control (TCP) and RDMA CM port (same number)
  double timeout_s = 10;                   // watchdog: no progress for this long -> abort
  // Local overrides, never sent to the peer.
  std::string device;                      // -d DEV[:PORT]
  std::optional<int> ib_port;
  std::optional<int> gid_index;            // -x
  std::string bind_address;                // server: listen address ("" = every address)
  // The shared secret (FABSCOPE_RDMA_TOKEN): the client sends it in its hello, a server with one
  // serves only clients that send the same. Never written to a result.
  std::string token;
};

// Defaults filled in and every value range-checked; throws UsageError naming the flag/value.
Options normalized(Options o);
// "65536", "64K", "64KiB", "8M", "1G" (binary multiples) -> bytes; UsageError naming the text.
std::uint64_t parse_size(const std::string& text);
// "mlx5_0" or "mlx5_0:1" -> device and port; UsageError on an empty name or a bad port.
std::pair<std::string, std::optional<int>> parse_device(const std::string& text);

// Integers the peer sent and those of a saved result are read with core/json.hpp's int_value,
// int_at, int_or and int_opt (range-checked; a float is refused by name).

// The perftest -a sweep: 2 B .. 8 MiB in powers of two.
std::vector<std::uint64_t> all_sizes();

// One automatic choice with its reason, printed like `fabscope env` prints variables.
struct Choice {
  std::string what;    // "device", "gid_index", "mtu", "lid"
  std::string value;   // "rxe1:1"
  std::string reason;  // "netdev veth1 holds 10.9.0.2, the source address of the route to 10.9.0.1"
};

// One side's RDMA endpoint as chosen and opened.
struct Endpoint {
  std::string host;        // hostname
  std::string address;     // IPv4 address used (control connection / RDMA CM), "" if none
  std::string device;      // "mlx5_0"
  int port = 1;
  std::string link_layer;  // "Ethernet" | "InfiniBand"
  std::string netdev;
  std::optional<int> gid_index;
  std::string gid;
  std::optional<std::uint32_t> lid;  // InfiniBand only
  std::optional<int> active_mtu;     // bytes
  std::optional<double> rate_gbps;   // the port's rate (probe)
  bool software = false;             // rxe/siw: no PCI function, rate is nominal
};

struct LatencyStats {
  double min_us = 0, median_us = 0, p99_us = 0, max_us = 0, mean_us = 0;
};

struct SizeResult {
  std::uint64_t bytes = 0;        // message size
  std::uint64_t iterations = 0;   // messages completed by this side, all QPs
  std::uint64_t total_bytes = 0;  // bytes moved by this side (bidirectional: both sides' sum)
  double seconds = 0;             // from the first post to the last completion (steady clock)
  double gbps = 0;                // total_bytes * 8 / seconds / 1e9
  double mib_per_s = 0;           // total_bytes / seconds / 2^20 (perftest's "MB/sec")
  double msg_rate_mpps = 0;       // messages / seconds / 1e6
  std::optional<LatencyStats> latency;  // lat tests: one-way (round trip / 2), READ: round trip
  std::optional<std::uint64_t> peer_total_bytes;  // what the other side counted
  std::optional<bool> data_verified;  // the receiving side found the sender's pattern
};

struct Result {
  static constexpr int kSchemaVersion = 1;
  std::string role;  // "client" | "server"
  Options options;   // as run (normalized, with the client's parameters on the server)
  Endpoint local, remote;
  std::vector<Choice> choices;
  std::optional<int> path_mtu;  // bytes, the MTU the QPs use
  std::vector<SizeResult> sizes;
  std::optional<double> efficiency;  // best Gb/s / port rate (bw tests)
  std::string verdict;               // one plain sentence
  std::vector<Finding> findings;
  bool completed = false;            // every size ran to the end
};

void to_json(json& j, const Options& v);
void from_json(const json& j, Options& v);
void to_json(json& j, const Choice& v);
void from_json(const json& j, Choice& v);
void to_json(json& j, const Endpoint& v);
void from_json(const json& j, Endpoint& v);
void to_json(json& j, const LatencyStats& v);
void from_json(const json& j, LatencyStats& v);
void to_json(json& j, const SizeResult& v);
void from_json(const json& j, SizeResult& v);
// Carries "schema": "fabscope.rdma" and "schema_version".
void to_json(json& j, const Result& v);
// The one reader of a saved fabscope.rdma document (`report` reads it through this too), of any
// version up to kSchemaVersion: every error names the file and the field ("FILE: field
// 'sizes[1].gbps': expected a number, got null"). Keys a result always has are required; the
// options the report does not need default as `rdma` would (op write, oob cm, one QP).
Result result_from_json(const std::string& file, const json& doc);
// result_from_json without a file name: its errors start "field '...'".
void from_json(const json& j, Result& v);

}  // namespace fabscope::rdma
