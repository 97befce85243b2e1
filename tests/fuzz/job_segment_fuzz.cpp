// libFuzzer target for the profiler segment reader: the bytes of a file any local user can put in
// the exporter's --jobs-dir. parse_job_segment refuses or decodes; what it decodes is in bounds,
// and the families made of it render (the exporter's scrape path after the read).
// Build and run: scripts/fuzz.sh job_segment (or cmake --preset fuzz; see tests/fuzz/README).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "exporter/job_families.hpp"
#include "exporter/job_segment.hpp"

using namespace fabscope;
using namespace fabscope::exporter;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Short inputs are mostly refused by size; a real segment's size with the input laid over its
  // beginning (and repeated) reaches the decoder's every branch.
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (size > 0 && size < job_segment_bytes() && (data[0] & 1)) {
    std::string full(job_segment_bytes(), '\0');
    for (std::size_t i = 0; i < full.size(); i++) full[i] = bytes[i % size];
    bytes = std::move(full);
  }
  try {
    JobSegment s = parse_job_segment(bytes, "fuzz");
    if (s.comms.size() > 16) std::abort();
    for (const auto& c : s.comms) {
      if (c.rank < 0 || c.rank >= c.nranks) std::abort();
      if (c.aggs.size() > 48 || c.ring.size() > 64 || c.peers.size() > 32) std::abort();
      for (const auto& e : c.peers)
        if (e.peer < 0 || e.peer >= c.nranks) std::abort();
    }
    std::vector<JobProcess> procs{{s, true}};
    auto fams = job_families(procs, {}, 4096);
    (void)render_text(fams);
  } catch (const Error&) {
  }
  return 0;
}
