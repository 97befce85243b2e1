// libFuzzer target for the parsers of NCCL environment values: NCCL_IB_HCA / NCCL_SOCKET_IFNAME
// name filters, IPv4 addresses, and every known variable's value as the lint rules read it
// (sizes, integers, booleans, lists). The input is one NAME=VALUE setting; a NAME that is not a
// known variable is replaced by one picked from the table (by the input's length).
// Build and run: scripts/fuzz.sh ncclenv_values (or cmake --preset fuzz; see tests/fuzz/README).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/node_info.hpp"
#include "ncclenv/envfile.hpp"
#include "ncclenv/lint.hpp"
#include "ncclenv/plan.hpp"
#include "ncclenv/vars.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabscope::ncclenv;
  const auto& vars = known_vars();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto eq = text.find('=');
  std::string name(eq == std::string_view::npos ? std::string_view() : text.substr(0, eq));
  std::string value(eq == std::string_view::npos ? text : text.substr(eq + 1));
  if (!find_var(name)) name = vars[size % vars.size()].name;

  NameFilter hca = parse_name_filter(value, true);
  (void)filter_selects(hca, "mlx5_0", 1);
  NameFilter ifname = parse_name_filter(value, false);
  (void)filter_selects(ifname, "eth0");
  (void)parse_ipv4(value);

  EnvEntry e{"environment", 0, name, value};
  fabscope::NodeInfo node;
  (void)lint(node, std::vector<EnvEntry>{e});
  (void)closest_var(value.substr(0, 64));
  return 0;
}
