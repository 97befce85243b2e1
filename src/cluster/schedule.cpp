#include "cluster/schedule.hpp"

#include <algorithm>
#include <numeric>
#include <random>

#include "core/error.hpp"

namespace fabscope::cluster {

PairsSpec parse_pairs(const std::string& text) {
  if (text == "all") return {PairsMode::All, 0};
  if (text == "ring") return {PairsMode::Ring, 0};
  if (text == "none") return {PairsMode::None, 0};
  long long k = 0;
  bool digits = !text.empty() && text.size() <= 6 &&
                std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits) k = std::stoll(text);
  if (!digits || k < 1)
    throw UsageError("--pairs '" + text + "': expected all, ring, none or a number of random rounds (1 or more)");
  return {PairsMode::Random, static_cast<int>(k)};
}

std::string pairs_name(const PairsSpec& spec) {
  switch (spec.mode) {
    case PairsMode::All: return "all";
    case PairsMode::Ring: return "ring";
    case PairsMode::Random: return std::to_string(spec.rounds);
    case PairsMode::None: break;
  }
  return "none";
}

int tournament_rounds(int n) {
  if (n < 2) return 0;
  return n % 2 == 0 ? n - 1 : n;
}

namespace {

Pair ordered(int a, int b) { return a < b ? Pair{a, b} : Pair{b, a}; }

// Circle method: slot 0 stays, the others rotate one step per round; with odd n a phantom
// slot (-1) makes the count even, and whoever meets it has a bye that round. In round r, slot i
// (i >= 1) holds slots[1 + (i - 1 - r) mod (m - 1)] and plays slot m - 1 - i.
std::size_t rotated(std::size_t i, std::size_t r, std::size_t m) {
  return i == 0 ? 0 : 1 + (i - 1 + (m - 1) - r % (m - 1)) % (m - 1);
}
// The inverse: the position in round r of the node at slot s.
std::size_t position_in_round(std::size_t s, std::size_t r, std::size_t m) {
  return s == 0 ? 0 : 1 + (s - 1 + r) % (m - 1);
}

Round ring_round(int n, std::size_t k) {
  // Edges (i, i+1): even i in round 0, odd i in round 1; for odd n the closing edge (n-1, 0)
  // touches node 0 (busy in round 0) and node n-1 (busy in round 1): a third round.
  Round out;
  if (n == 2) return {{0, 1}};
  for (int i = 0; i < n; ++i) {
    const bool closing = n % 2 && i == n - 1;
    const std::size_t round = closing ? 2 : static_cast<std::size_t>(i % 2);
    if (round == k) out.push_back(ordered(i, (i + 1) % n));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Schedule::Schedule(int n, const PairsSpec& spec, std::uint64_t seed) : mode_(spec.mode), n_(n) {
  if (n < 0) throw Error("pairwise schedule: negative node count " + std::to_string(n));
  if (n < 2 && mode_ != PairsMode::Random) return;
  switch (mode_) {
    case PairsMode::None: return;
    case PairsMode::Ring: rounds_ = n == 2 ? 1 : (n % 2 ? 3 : 2); return;
    case PairsMode::All:
    case PairsMode::Random: {
      const int max = tournament_rounds(n);
      if (mode_ == PairsMode::Random && (spec.rounds < 1 || spec.rounds > max))
        throw UsageError("--pairs " + std::to_string(spec.rounds) + ": " + std::to_string(n) + " nodes have " +
                         std::to_string(max) + " distinct rounds (use --pairs all for every pair)");
      std::vector<int> order(static_cast<std::size_t>(n));
      std::iota(order.begin(), order.end(), 0);
      std::mt19937_64 rng(seed);
      if (mode_ == PairsMode::Random) std::shuffle(order.begin(), order.end(), rng);
      slots_ = order;
      if (slots_.size() % 2) slots_.push_back(-1);
      position_.assign(static_cast<std::size_t>(n), 0);
      for (std::size_t i = 0; i < slots_.size(); ++i)
        if (slots_[i] >= 0) position_[static_cast<std::size_t>(slots_[i])] = i;
      if (mode_ == PairsMode::All) {
        rounds_ = static_cast<std::size_t>(max);
      } else {
        // K distinct tournament rounds: a partial Fisher-Yates draw.
        std::vector<std::size_t> idx(static_cast<std::size_t>(max));
        std::iota(idx.begin(), idx.end(), std::size_t{0});
        for (int k = 0; k < spec.rounds; ++k) {
          std::uniform_int_distribution<std::size_t> pick(static_cast<std::size_t>(k), idx.size() - 1);
          std::swap(idx[static_cast<std::size_t>(k)], idx[pick(rng)]);
          picked_.push_back(idx[static_cast<std::size_t>(k)]);
        }
        rounds_ = picked_.size();
      }
      return;
    }
  }
}

Round Schedule::round(std::size_t k) const {
  if (k >= rounds_) return {};
  if (mode_ == PairsMode::Ring) return ring_round(n_, k);
  const std::size_t r = mode_ == PairsMode::Random ? picked_[k] : k;
  const std::size_t m = slots_.size();
  Round out;
  for (std::size_t i = 0; i < m / 2; ++i) {
    const int a = slots_[rotated(i, r, m)], b = slots_[rotated(m - 1 - i, r, m)];
    if (a >= 0 && b >= 0) out.push_back(ordered(a, b));
  }
  std::sort(out.begin(), out.end());
  return out;
}

int Schedule::peer(std::size_t k, int rank) const {
  if (k >= rounds_ || rank < 0 || rank >= n_) return -1;
  if (mode_ == PairsMode::Ring) {
    for (auto [a, b] : ring_round(n_, k))
      if (a == rank || b == rank) return a == rank ? b : a;
    return -1;
  }
  const std::size_t r = mode_ == PairsMode::Random ? picked_[k] : k;
  const std::size_t m = slots_.size();
  const std::size_t pos = position_in_round(position_[static_cast<std::size_t>(rank)], r, m);
  return slots_[rotated(m - 1 - pos, r, m)];
}

std::vector<Round> make_schedule(int n, const PairsSpec& spec, std::uint64_t seed) {
  Schedule s(n, spec, seed);
  std::vector<Round> out;
  for (std::size_t k = 0; k < s.size(); ++k) out.push_back(s.round(k));
  return out;
}

}  // namespace fabscope::cluster
