// Stand-in for the collector (sweep.cpp) on a branch that does not have it: every entry point
// says the fabric cannot be reached, so the command, its --from mode and its tests link and run.
// Removed when the collector is merged; nothing may depend on it.
#include "subnet/sweep.hpp"

namespace fabscope::subnet {

namespace {
[[noreturn]] void unavailable() {
  throw AccessError(AccessError::Kind::Failed,
                    "this build has no InfiniBand fabric sweep; judge a saved sweep with --from FILE");
}
}  // namespace

Subnet sweep(const SweepOptions&) { unavailable(); }
void read_counters(Subnet&, const SweepOptions&) { unavailable(); }
std::vector<Hop> trace_route(const Subnet&, int, std::uint16_t, const SweepOptions&) { unavailable(); }

}  // namespace fabscope::subnet
