// libFuzzer target for what `fabscope job` reads from other machines: a node exporter's /jobs
// (schema fabscope.job-records) and a Prometheus server's query answers. The first byte picks
// the reader; the readers refuse with fabscope::Error or give records the analysis accepts, and
// the analysis and its JSON never fail on them.
// Build and run: scripts/fuzz.sh job_records (or cmake --preset fuzz; see tests/fuzz/README).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "job/analysis.hpp"
#include "job/sources.hpp"

using namespace fabscope;
using namespace fabscope::job;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view all(reinterpret_cast<const char*>(data) + 1, size - 1);
  Snapshot snap;
  try {
    if (data[0] % 2 == 0) {
      snap = parse_snapshot(all, "fuzz");
    } else {
      // the same bytes answer every query but time(), which answers a fixed instant
      std::map<std::string, std::string> answers;
      for (const auto& [name, q] : prometheus_queries("1m")) answers[name] = std::string(all);
      answers["now"] = R"({"status":"success","data":{"resultType":"scalar","result":[1800000000,"1800000000"]}})";
      snap = prometheus_snapshot(answers, "fuzz");
    }
  } catch (const Error&) {
    return 0;
  }
  Options o;
  o.min_ops = 2;
  const Analysis a = analyze(snap, o);
  (void)dump_json(analysis_to_json(a, snap, o), -1);
  return 0;
}
