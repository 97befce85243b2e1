#pragma once
// Pairwise schedule: rounds of concurrent, disjoint pairs, so no node ever runs two tests at once
// and every round keeps each node's NIC busy with one peer. Pure.
//   all   round-robin tournament (circle method): N-1 rounds of N/2 pairs, every pair once;
//         odd N: one node sits out each round (a bye), N rounds of (N-1)/2 pairs
//   ring  each node with its successor in rank order (i, i+1 mod N): 2 rounds (3 for odd N)
//   K     K rounds drawn at random from the tournament of a random node order (seeded): each
//         node meets K distinct peers
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fabscope::cluster {

enum class PairsMode { None, All, Ring, Random };

struct PairsSpec {
  PairsMode mode = PairsMode::None;
  int rounds = 0;  // Random: K
};

// "all", "ring", "none", or a positive integer K. Throws UsageError naming the value.
PairsSpec parse_pairs(const std::string& text);
std::string pairs_name(const PairsSpec& spec);

using Pair = std::pair<int, int>;  // ranks, first < second
using Round = std::vector<Pair>;

// The schedule, one round at a time: every rank computes the same rounds from (n, spec, seed),
// so rank 0 never sends the pair lists (O(N) bytes per round to each of N ranks) and nobody holds
// all N^2/2 pairs of --pairs all. Throws UsageError for K outside 1..tournament_rounds(n), Error
// for n < 0.
class Schedule {
 public:
  Schedule(int n, const PairsSpec& spec, std::uint64_t seed);
  std::size_t size() const { return rounds_; }
  Round round(std::size_t k) const;  // pairs sorted, first < second
  // This rank's peer in round k, or -1 (a bye, or not in this schedule). O(1).
  int peer(std::size_t k, int rank) const;

 private:
  PairsMode mode_;
  int n_;
  std::size_t rounds_ = 0;
  std::vector<int> slots_;            // All/Random: the circle's slots (-1 is the bye)
  std::vector<int> position_;         // rank -> its slot
  std::vector<std::size_t> picked_;   // Random: the tournament round of each drawn round
};

// Every round at once (tests, small N).
std::vector<Round> make_schedule(int n, const PairsSpec& spec, std::uint64_t seed);

// Rounds of the full tournament for n nodes (n-1 for even n, n for odd n, 0 for n < 2).
int tournament_rounds(int n);

}  // namespace fabscope::cluster
