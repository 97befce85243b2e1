#pragma once
// What `fabscope tune` may choose per collective call: algorithm x protocol x channel count, the
// three things an NCCL tuner plugin sets (docs/tune.md). A Choice with every field unset is
// NCCL's own decision, the baseline every tuned choice must beat.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/collectives.hpp"

namespace fabscope::tune {

// The numbers NCCL uses (NCCL_ALGO_*, NCCL_PROTO_*), as in the tuner table.
enum class Algo : int { Tree = 0, Ring = 1, CollNetDirect = 2, CollNetChain = 3, Nvls = 4, NvlsTree = 5, Pat = 6 };
enum class Proto : int { LL = 0, LL128 = 1, Simple = 2 };

struct Choice {
  int algo = -1;      // Algo, -1 = NCCL's
  int proto = -1;     // Proto, -1 = NCCL's (set together with algo)
  int channels = -1;  // -1 = NCCL's
  bool is_default() const { return algo < 0 && proto < 0 && channels < 0; }
  bool operator==(const Choice&) const = default;
};
const Choice kNcclDefault{};

// "ring/simple/16ch", "ring/ll/nccl-ch", "NCCL default".
std::string label(const Choice& c);
std::string algo_name(int algo);    // "ring"; "nccl" for -1
std::string proto_name(int proto);  // "simple"; "nccl" for -1
// Table names of the five tunable collectives; nullopt-like -1 for the others.
int nccl_func(bench::Collective c);  // ncclFunc_t number, -1 when no tuner row can name it
std::string table_name(bench::Collective c);  // "allreduce"
// "allreduce" back to the collective; nullopt for a name no tuner row uses.
std::optional<bench::Collective> collective_from_table_name(const std::string& name);

// "ring/simple/16ch", "nccl-algo/8ch", "NCCL default" back to a Choice: only what label() writes;
// fabscope::Error naming the label otherwise.
Choice choice_from_label(const std::string& text);

struct SpaceSpec {
  std::vector<int> algos;      // Algo values; empty = every algorithm sensible for the collective
  std::vector<int> protos;     // Proto values; empty = all three
  std::vector<int> channels{-1, 2, 4, 8, 16, 24, 32};  // -1 = NCCL's count
  bool nvls = false;           // NVLS/NVLS-Tree (off by default: they reserve memory and SMs
                               // on every GPU, and shared machines are asked to keep them off)
  bool collnet = false;        // CollNet (needs SHARP hardware and its plugin)
};

// NCCL's default first, then every algorithm x protocol x channel choice that NCCL implements
// for the collective (tree: all-reduce only; PAT: all-gather and reduce-scatter, one GPU per
// node; broadcast and reduce: ring only). Throws UsageError when nothing is left.
std::vector<Choice> candidates(bench::Collective c, const SpaceSpec& spec, int nnodes, int nranks);

// "ring,tree" / "ll,simple" / "-1,8,16" parsed for the flags; UsageError names the bad element.
std::vector<int> parse_algos(const std::string& text);
std::vector<int> parse_protos(const std::string& text);
std::vector<int> parse_channels(const std::string& text);

}  // namespace fabscope::tune
