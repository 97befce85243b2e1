// libFuzzer target for `capture --redact` on a tool's output or any text file of the archive
// (nft -j, lldpcli -f json, sysfs and procfs text): the input is redacted after the node's values
// were learnt, then checked: text stays text (no NUL, valid UTF-8 when the input was), the output
// is the same for the same input (one stand-in per value), and a known MAC, address and host name
// planted after the input in the forms tools print are gone. The first byte picks a host name
// length (short names such as "vm" must not touch sysctl keys).
// Build and run: scripts/fuzz.sh redact_tool (or cmake --preset fuzz; see tests/fuzz/README).
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "capture/redact.hpp"

namespace {
// Plain text without NUL (the redactor leaves binary data as it is, planted values included).
bool plain_text(std::string_view s) {
  for (char c : s)
    if (c == '\0' || static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

// Redacts text until no new value is learnt (at most 4 times), then once more: 1 when that last
// output equals the one before, 0 when it differs, 2 when the values did not settle.
int stable_output(fabscope::capture::Redactor& r, std::string_view text) {
  auto before = r.counts();
  std::string last = r.text(text);
  for (int k = 0; k < 4; ++k) {
    const auto now = r.counts();
    if (now == before) return r.text(text) == last ? 1 : 0;
    before = now;
    last = r.text(text);
  }
  return 2;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || size > 65536) return 0;
  static const char* const kHosts[] = {"vm", "gpu7", "node-0042.cluster.example", "login3"};
  const std::string host = kHosts[data[0] % 4];
  const std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  fabscope::capture::Redactor r("fuzz key");
  r.add_host_name(host);
  (void)r.text("52:54:00:12:34:56\n10.20.30.40\n");
  (void)r.text(in);
  const std::string out = r.text(in);
  if (out.find('\0') != std::string::npos && in.find('\0') == std::string_view::npos) std::abort();
  if (stable_output(r, in) == 0) std::abort();
  if (!plain_text(in)) return 0;
  const std::string planted = std::string(in) + "\n peer 52-54-00-12-34-56 5254.0012.3456 ip:10.20.30.40 to-" + host +
                              " " + host + "_eth0\n";
  std::string got = r.text(planted);
  const std::size_t at = got.rfind("\n peer ");  // the planted line (the input may hold the values glued)
  if (at == std::string::npos) std::abort();
  const std::string tail = got.substr(at);
  std::string low = tail;
  for (auto& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const std::string& v : {std::string("12-34-56"), std::string("0012.3456"), std::string("10.20.30.40"),
                              "to-" + host + " ", " " + host + "_eth0"})
    if (low.find(v) != std::string::npos) std::abort();
  return 0;
}
