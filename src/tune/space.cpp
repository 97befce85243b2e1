#include "tune/space.hpp"

#include <algorithm>
#include <array>
#include <sstream>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace fabscope::tune {

namespace {
constexpr std::array<const char*, 7> kAlgoNames{"tree", "ring", "collnet_direct", "collnet_chain",
                                                "nvls", "nvls_tree", "pat"};
constexpr std::array<const char*, 3> kProtoNames{"ll", "ll128", "simple"};

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto b = item.find_first_not_of(' ');
    auto e = item.find_last_not_of(' ');
    out.push_back(b == std::string::npos ? "" : item.substr(b, e - b + 1));
  }
  return out;
}

template <std::size_t N>
std::vector<int> parse_names(const std::string& text, const std::array<const char*, N>& names,
                             const char* what) {
  std::vector<int> out;
  for (const auto& item : split(text)) {
    auto it = std::find(names.begin(), names.end(), core::lower(item));
    if (it == names.end()) {
      std::string all;
      for (auto* n : names) all += std::string(all.empty() ? "" : ", ") + n;
      throw UsageError(std::string("unknown ") + what + " '" + item + "' (" + all + ")");
    }
    int v = static_cast<int>(it - names.begin());
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  if (out.empty()) throw UsageError(std::string("empty list of ") + what + "s");
  return out;
}
}  // namespace

std::string algo_name(int a) { return a >= 0 && a < 7 ? kAlgoNames[a] : "nccl"; }
std::string proto_name(int p) { return p >= 0 && p < 3 ? kProtoNames[p] : "nccl"; }

std::string label(const Choice& c) {
  if (c.is_default()) return "NCCL default";
  std::string s = c.algo < 0 ? "nccl-algo" : algo_name(c.algo) + "/" + proto_name(c.proto);
  return s + "/" + (c.channels < 0 ? "nccl-ch" : std::to_string(c.channels) + "ch");
}

int nccl_func(bench::Collective c) {
  switch (c) {
    case bench::Collective::Broadcast: return 0;
    case bench::Collective::Reduce: return 1;
    case bench::Collective::AllGather: return 2;
    case bench::Collective::ReduceScatter: return 3;
    case bench::Collective::AllReduce: return 4;
    default: return -1;
  }
}

std::string table_name(bench::Collective c) {
  static const char* const names[] = {"broadcast", "reduce", "allgather", "reducescatter", "allreduce"};
  int f = nccl_func(c);
  return f < 0 ? "" : names[f];
}

std::optional<bench::Collective> collective_from_table_name(const std::string& name) {
  for (const auto& d : bench::all_collectives())
    if (nccl_func(d.id) >= 0 && table_name(d.id) == name) return d.id;
  return std::nullopt;
}

Choice choice_from_label(const std::string& text) {
  if (text == label(kNcclDefault)) return kNcclDefault;
  Choice c;
  const auto slash = text.rfind('/');
  const std::string head = slash == std::string::npos ? "" : text.substr(0, slash);
  const std::string ch = slash == std::string::npos ? text : text.substr(slash + 1);
  try {
    if (ch != "nccl-ch") {
      if (ch.size() < 3 || ch.substr(ch.size() - 2) != "ch") throw UsageError("no channel count");
      c.channels = parse_channels(ch.substr(0, ch.size() - 2)).at(0);
    }
    if (head != "nccl-algo") {
      const auto s2 = head.find('/');
      if (s2 == std::string::npos) throw UsageError("no algorithm/protocol");
      c.algo = parse_algos(head.substr(0, s2)).at(0);
      c.proto = parse_protos(head.substr(s2 + 1)).at(0);
    }
  } catch (const Error& e) {
    throw Error("the choice '" + text + "' is not a label fabscope writes (" + e.what() + ")");
  }
  if (label(c) != text) throw Error("the choice '" + text + "' is not a label fabscope writes");
  return c;
}

std::vector<Choice> candidates(bench::Collective c, const SpaceSpec& spec, int nnodes, int nranks) {
  if (nccl_func(c) < 0)
    throw UsageError("collective '" + std::string(bench::describe(c).name) +
                     "' cannot be tuned: NCCL's tuner interface covers all_reduce, all_gather, "
                     "reduce_scatter, broadcast and reduce");
  std::vector<int> algos = spec.algos;
  if (algos.empty()) {
    using A = Algo;
    for (A a : {A::Tree, A::Ring, A::CollNetDirect, A::CollNetChain, A::Nvls, A::NvlsTree, A::Pat})
      algos.push_back(static_cast<int>(a));
  }
  std::vector<int> protos = spec.protos.empty() ? std::vector<int>{0, 1, 2} : spec.protos;
  const bool reduce_all = c == bench::Collective::AllReduce;
  const bool gather_like = c == bench::Collective::AllGather || c == bench::Collective::ReduceScatter;
  auto implemented = [&](int a) {
    switch (static_cast<Algo>(a)) {
      case Algo::Ring: return true;
      case Algo::Tree: return reduce_all;
      case Algo::CollNetDirect: return spec.collnet && (reduce_all || gather_like);
      case Algo::CollNetChain: return spec.collnet && reduce_all;
      case Algo::Nvls: return spec.nvls && (reduce_all || gather_like);
      case Algo::NvlsTree: return spec.nvls && reduce_all && nnodes > 1;
      // PAT: NCCL 2.23+ runs it with one rank per node only.
      case Algo::Pat: return gather_like && nnodes > 1 && nnodes == nranks;
    }
    return false;
  };
  std::vector<Choice> out{kNcclDefault};
  for (int ch : spec.channels) {
    for (int a : algos) {
      if (!implemented(a)) continue;
      for (int p : protos) {
        // NVLS runs the simple protocol only.
        if ((a == static_cast<int>(Algo::Nvls) || a == static_cast<int>(Algo::NvlsTree)) && p != 2) continue;
        out.push_back(Choice{a, p, ch});
      }
    }
  }
  if (out.size() == 1)
    throw UsageError("nothing to search for " + std::string(bench::describe(c).name) +
                     ": the algorithms given are not implemented for it (ring always is)");
  return out;
}

std::vector<int> parse_algos(const std::string& text) { return parse_names(text, kAlgoNames, "algorithm"); }
std::vector<int> parse_protos(const std::string& text) { return parse_names(text, kProtoNames, "protocol"); }

std::vector<int> parse_channels(const std::string& text) {
  std::vector<int> out;
  for (const auto& item : split(text)) {
    int v = 0;
    std::size_t used = 0;
    try {
      v = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || (v != -1 && (v < 1 || v > 64)))
      throw UsageError("channel count '" + item + "' is not -1 (NCCL's) or 1..64");
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  if (out.empty()) throw UsageError("empty list of channel counts");
  return out;
}

}  // namespace fabscope::tune
