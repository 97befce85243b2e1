// libFuzzer target for the files `fabscope fabric` reads: a saved sweep (--from, --expect; the
// fabscope.fabric schema), ibqueryerrors' thresholds file (--thresholds) and a cabling plan
// (--plan). The first byte picks the reader ('0' sweep, '1' thresholds, '2' plan: value mod 3),
// the rest is the file. A plan that reads is judged against an empty fabric. A sweep that reads is
// judged (alone, against itself as the expected topology and as the earlier sample), must
// write back the same document, and gives routes from its saved forwarding tables ("lft")
// between its first nodes or a clear error. Run:
//   build-fuzz/tests/fuzz/fabscope_fabric_files_fuzz tests/fuzz/corpus/fabric_files
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "fabric/judge.hpp"
#include "fabric/model.hpp"
#include "fabric/plan.hpp"
#include "fabric/render.hpp"
#include "fabric/route_checks.hpp"
#include "fabric/routes.hpp"
#include "fabric/thresholds.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabscope;
  using namespace fabscope::fabric;
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] % 3 == 1) {
    try {
      (void)parse_thresholds(text, "fuzz");
    } catch (const Error&) {
    }
    return 0;
  }
  if (data[0] % 3 == 2) {
    try {
      (void)judge_plan(Subnet{}, parse_plan(text, "fuzz"));
    } catch (const Error&) {
    }
    return 0;
  }
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return 0;
  Subnet s;
  try {
    s = subnet_from_json(j);
  } catch (const Error&) {
    return 0;
  }
  // What was read writes back to a document that reads to the same thing.
  const json again = to_json(s);
  if (to_json(subnet_from_json(again)) != again) std::abort();
  JudgeOptions o;
  o.expected = s;
  o.before = s;
  o.interval_s = 1;
  (void)judge(s, o);
  const auto facts = link_facts(s);
  const auto findings = judge(s, JudgeOptions{});
  (void)render_text(s, facts, findings);
  (void)dump_json(fabric_json(s, facts, findings));
  // The routing checks (judge() ran them where the tables are) and their human lines; the sweep's
  // cabling as a plan, read back and judged against the same sweep.
  (void)render_route_check(s, check_routes(s));
  try {
    (void)judge_plan(s, parse_plan(plan_csv(s), "fuzz"));
  } catch (const Error&) {  // a port beyond 254, a description the CSV cannot hold
  }
  // Routes from the saved tables: every pair among the first nodes, to each one's LID, ends or
  // throws (a loop, a missing entry, a wrong end), never hangs or reads out of bounds.
  (void)has_routes(s);
  const int n = static_cast<int>(std::min<std::size_t>(s.nodes.size(), 8));
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      for (int port : {0, 1, 2}) {
        try {
          (void)route_from_lfts(s, a, port, s.nodes[b].lid() ? s.nodes[b].lid() : 1);
        } catch (const Error&) {
        }
      }
  return 0;
}
