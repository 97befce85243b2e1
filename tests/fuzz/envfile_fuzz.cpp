// libFuzzer target for the readers of nccl.conf and env-files (docker --env-file, systemd
// EnvironmentFile=) and for the lint rules that judge what they read. The first byte picks the
// dialect; the rest is the file.
// Build and run: scripts/fuzz.sh envfile (or cmake --preset fuzz; see tests/fuzz/README).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/node_info.hpp"
#include "ncclenv/envfile.hpp"
#include "ncclenv/lint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabscope::ncclenv;
  if (size == 0) return 0;
  Dialect dialect = data[0] % 2 ? Dialect::EnvFile : Dialect::NcclConf;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  ParsedFile parsed = parse_env_text(text, "fuzz.conf", dialect);
  if (parsed.findings.size() > kMaxSyntaxFindings + 1) std::abort();
  for (const auto& e : parsed.entries) {
    if (e.line <= 0) std::abort();
    if (dialect == Dialect::NcclConf && e.value.size() > kNcclValueMax) std::abort();
  }
  fabscope::NodeInfo node;
  (void)lint(node, parsed.entries);
  return 0;
}
