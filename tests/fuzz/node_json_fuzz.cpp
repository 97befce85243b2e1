// libFuzzer target for a saved node description (`fabscope probe --json`, read back by
// `fabscope check --node FILE`): JSON text -> NodeInfo -> every check -> the check and doctor
// reports. A file that is not a node description (a key twice, a negative counter) must be an
// exception, never a crash; the text reports never carry a control byte from the file.
// Build and run: scripts/fuzz.sh node_json (or cmake --preset fuzz; see tests/fuzz/README).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "checks/checks.hpp"
#include "checks/doctor.hpp"
#include "checks/render.hpp"
#include "core/json.hpp"
#include "core/node_info.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabscope;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  json j;
  NodeInfo node;
  try {
    j = parse_input_json(text);  // as check --node reads it: a key twice is refused
    if (!j.is_object()) return 0;
    node = j.get<NodeInfo>();
  } catch (const std::exception&) {
    return 0;  // the CLI reports it naming the file
  }
  // Counters, rates and ids are never negative once read (docs/formats.md).
  for (const auto& d : node.rdma_devices)
    for (const auto& p : d.ports)
      if (p.port < 0 || (p.rate_gbps && !(*p.rate_gbps >= 0))) std::abort();
  auto findings = checks::run(node);
  // The text reports go to a terminal: no control byte but the newline.
  auto printable = [](const std::string& s) {
    return std::none_of(s.begin(), s.end(), [](char c) {
      return (static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f;
    });
  };
  if (!printable(checks::render_check_text(node, findings))) std::abort();
  (void)checks::check_json(node, findings).dump(-1, ' ', false, json::error_handler_t::replace);
  auto report = checks::diagnose_node(node, findings);
  if (!printable(checks::render_doctor_text(node, report))) std::abort();
  // A node read back must write out and read back to the same JSON (what cluster mode relies on).
  json once = node;
  json twice = once.get<NodeInfo>();
  if (once != twice) std::abort();
  return 0;
}
