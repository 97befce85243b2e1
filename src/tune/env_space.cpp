#include "tune/env_space.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace fabscope::tune {

namespace {

EnvAssignment one(const std::string& var, const std::string& value) { return EnvAssignment{{{var, value}}}; }

// The short names of --env-settings, in search order.
const std::vector<std::pair<std::string, std::string>> kSettings = {
    {"socket", "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD"},
    {"qps", "NCCL_IB_QPS_PER_CONNECTION"},
    {"buffsize", "NCCL_BUFFSIZE"},
    {"nthreads", "NCCL_NTHREADS"},
};

const std::string kNoNetwork =
    "one node: no network transport between the ranks (NCCL uses it there only with NCCL_P2P_DISABLE=1 and "
    "NCCL_SHM_DISABLE=1)";

bool wanted(const EnvSpaceSpec& spec, const std::string& key) {
  return spec.only.empty() || std::find(spec.only.begin(), spec.only.end(), key) != spec.only.end();
}

}  // namespace

std::string net_path_name(NetPath p) {
  switch (p) {
    case NetPath::None: return "none (one node)";
    case NetPath::IB: return "NET/IB";
    case NetPath::Socket: return "NET/Socket";
    case NetPath::Other: return "NET/plugin";
  }
  return "?";
}

namespace {
bool set_and_not_zero(const std::string& v) { return !v.empty() && v != "0"; }
}  // namespace

NetPath detect_net_path(const NetPathInputs& in) {
  const bool net_inside_node = set_and_not_zero(in.p2p_disable) && set_and_not_zero(in.shm_disable);
  if (in.nnodes <= 1 && !net_inside_node) return NetPath::None;
  if (!in.nccl_net.empty()) {
    const std::string n = core::lower(in.nccl_net);
    if (n == "ib") return NetPath::IB;
    if (n == "socket") return NetPath::Socket;
    return NetPath::Other;
  }
  return !set_and_not_zero(in.ib_disable) && in.active_rdma_port ? NetPath::IB : NetPath::Socket;
}

std::string EnvAssignment::label() const {
  if (vars.empty()) return "default";
  std::string s;
  for (const auto& [k, v] : vars) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

EnvAssignment merged(const EnvAssignment& a, const EnvAssignment& b) {
  EnvAssignment r = a;
  for (const auto& kv : b.vars) {
    auto it = std::find_if(r.vars.begin(), r.vars.end(), [&](const auto& x) { return x.first == kv.first; });
    if (it != r.vars.end()) it->second = kv.second;
    else r.vars.push_back(kv);
  }
  return r;
}

std::vector<EnvGroup> env_groups(NetPath path, const EnvSpaceSpec& spec) {
  // The transport's own settings first: where the network is the bottleneck (one socket thread
  // moves a few GB/s), a buffer or thread count measured before it was widened would be judged
  // on a path that the tuned job no longer has.
  std::vector<EnvGroup> out;
  if (wanted(spec, "socket")) {
    EnvGroup g{kSettings[0].second, "socket transport: helper threads per connection x sockets per thread", {{}}, ""};
    if (path == NetPath::Socket) {
      // NCCL caps the product at 64 (MAX_SOCKETS); 1 x 1 is its generic default.
      for (int t : {1, 2, 4, 8})
        for (int s : {1, 2, 4})
          if (t * s > 1 && t * s <= 64)
            g.candidates.push_back({{{"NCCL_SOCKET_NTHREADS", std::to_string(t)}, {"NCCL_NSOCKS_PERTHREAD", std::to_string(s)}}});
    } else {
      g.skipped = path == NetPath::None ? kNoNetwork : "the network transport is " + net_path_name(path) + ", not NET/Socket";
    }
    out.push_back(std::move(g));
  }
  if (wanted(spec, "qps")) {
    EnvGroup g{"NCCL_IB_QPS_PER_CONNECTION", "IB/RoCE queue pairs per connection (default 1)", {{}}, ""};
    if (path == NetPath::IB) {
      for (int v : {2, 4, 8}) g.candidates.push_back(one("NCCL_IB_QPS_PER_CONNECTION", std::to_string(v)));
    } else {
      g.skipped = path == NetPath::None ? kNoNetwork : "the network transport is " + net_path_name(path) + ", not NET/IB";
    }
    out.push_back(std::move(g));
  }
  if (wanted(spec, "buffsize")) {
    // NCCL's default is 4 MiB (DEFAULT_BUFFSIZE); the buffer is per channel and peer, so larger
    // values cost GPU memory in proportion.
    EnvGroup g{"NCCL_BUFFSIZE", "bytes of the Simple protocol's buffer per channel and peer (default 4 MiB)", {{}}, ""};
    for (long v : {1l << 20, 2l << 20, 8l << 20, 16l << 20}) g.candidates.push_back(one("NCCL_BUFFSIZE", std::to_string(v)));
    out.push_back(std::move(g));
  }
  if (wanted(spec, "nthreads")) {
    // NCCL accepts multiples of the warp size up to 512 (its default on sm_70 and later).
    EnvGroup g{"NCCL_NTHREADS", "CUDA threads per channel block (default 512 on current GPUs)", {{}}, ""};
    for (int v : {128, 256, 512}) g.candidates.push_back(one("NCCL_NTHREADS", std::to_string(v)));
    out.push_back(std::move(g));
  }
  return out;
}

EnvAssignment tunable_env_from_process() {
  EnvAssignment a;
  for (const char* name : {"NCCL_BUFFSIZE", "NCCL_NTHREADS", "NCCL_SOCKET_NTHREADS", "NCCL_NSOCKS_PERTHREAD",
                           "NCCL_IB_QPS_PER_CONNECTION"})
    if (const char* v = std::getenv(name); v && *v) a.vars.emplace_back(name, v);
  return a;
}

std::vector<std::string> parse_env_settings(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    std::string item = core::lower(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    bool known = std::any_of(kSettings.begin(), kSettings.end(), [&](const auto& k) { return k.first == item; });
    if (!known) throw UsageError("tune: --env-settings '" + item + "' is not one of buffsize, nthreads, socket, qps");
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace fabscope::tune
