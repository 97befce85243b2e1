// libFuzzer target for NCCL's RAS report as `fabscope job status --ras` reads it: any bytes a
// server on the RAS port sends after STATUS (text, or JSON from the first '{'). parse_ras_report
// never throws for the content; what it keeps is bounded and printable; the findings and the
// JSON output are built from it.
// Build and run: scripts/fuzz.sh ras (or cmake --preset fuzz; see tests/fuzz/README).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/json.hpp"
#include "job/ras.hpp"

using namespace fabscope;
using namespace fabscope::job;

namespace {
void printable_or_abort(const std::string& s) {
  if (s.size() > 1000) std::abort();
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) std::abort();
}
void rank_ok(const RasRank& r) {
  if (r.rank < -1 || r.rank >= (1 << 24)) std::abort();
  printable_or_abort(r.gpu);
  printable_or_abort(r.host);
  printable_or_abort(r.state);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  RasReport r = parse_ras_report(text, "fuzz");
  if (r.comms.size() > 4096 || r.groups.size() > 4096 || r.other.size() > 200 || r.warnings.size() > 2000) std::abort();
  if (r.missing_processes.size() > 256 || r.dead_processes.size() > 256) std::abort();
  printable_or_abort(r.nccl_version);
  for (const auto& o : r.other) printable_or_abort(o);
  for (const auto& w : r.warnings) printable_or_abort(w);
  for (const auto& c : r.comms) {
    printable_or_abort(c.hash);
    if (c.missing_ranks.size() > 256 || c.error_ranks.size() > 256 || c.status_ranks.size() > 256) std::abort();
    if (c.op_mismatches.size() > 32) std::abort();
    for (const auto& x : c.missing_ranks) rank_ok(x);
    for (const auto& x : c.error_ranks) rank_ok(x);
    for (const auto& x : c.status_ranks) rank_ok(x);
    for (const auto& m : c.op_mismatches) {
      if (m.groups.size() > 64) std::abort();
      for (const auto& g : m.groups) {
        if (g.ranks.size() > 16) std::abort();
        for (const auto& x : g.ranks) rank_ok(x);
      }
      (void)m.ranks_behind();
    }
  }
  auto findings = ras_findings(r);
  for (const auto& f : findings)
    if (f.id.rfind("job.ras_", 0) != 0) std::abort();
  (void)dump_json(ras_report_to_json(r));
  return 0;
}
