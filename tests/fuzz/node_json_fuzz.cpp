// libFuzzer target for a saved node description (`fabscope probe --json`, read back by
// `fabscope check --node FILE`): JSON text -> NodeInfo -> every check -> the check and doctor
// reports. A file that is not a node description must be an exception, never a crash.
// Build and run: scripts/fuzz.sh node_json (or cmake --preset fuzz; see tests/fuzz/README).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string_view>

#include "checks/checks.hpp"
#include "checks/doctor.hpp"
#include "checks/report.hpp"
#include "core/json.hpp"
#include "core/node_info.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabscope;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return 0;
  NodeInfo node;
  try {
    node = j.get<NodeInfo>();
  } catch (const std::exception&) {
    return 0;  // the CLI reports it naming the file
  }
  auto findings = checks::run(node);
  (void)checks::render_check_text(node, findings);
  (void)checks::check_json(node, findings).dump(-1, ' ', false, json::error_handler_t::replace);
  auto report = checks::diagnose_node(node, findings);
  (void)checks::render_doctor_text(node, report);
  // A node read back must write out and read back to the same JSON (what cluster mode relies on).
  json once = node;
  json twice = once.get<NodeInfo>();
  if (once != twice) std::abort();
  return 0;
}
