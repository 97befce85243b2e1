// libFuzzer target for `capture --redact` on a kernel command line (proc/cmdline): the host names
// it gives (hostname=, dracut's ip=) are learnt, then the line is redacted twice (learn, write,
// as capture does). Checked: a MAC and a host name the node's files gave are gone from the output
// in every spelling the redactor promises, wherever the input puts them between separators.
// Build and run: scripts/fuzz.sh redact_cmdline (or cmake --preset fuzz; see tests/fuzz/README).
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "capture/redact.hpp"

namespace {
std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
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
  if (size > 16384) return 0;  // proc/cmdline is at most a few KiB (COMMAND_LINE_SIZE)
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  fabscope::capture::Redactor r("fuzz key");
  r.add_host_name("gpu7");
  (void)r.text("b8:ce:f6:a1:b2:c4\n");  // the node's netdev, read first from sys/class/net
  r.learn_cmdline(in);
  if (!plain_text(in)) {
    (void)r.text(in);
    return 0;
  }
  // The fuzzed line with the known values planted in the forms a command line uses.
  const std::string line = std::string(in) + " BOOTIF=01-b8-ce-f6-a1-b2-c4 ifname=eth0:B8:CE:F6:A1:B2:C4 " +
                           "ip=10.1.2.3::10.1.2.254:255.255.255.0:gpu7:eth0:none\n";
  (void)r.text(line);
  const std::string out = r.text(line);
  const std::size_t at = out.rfind(" BOOTIF=01-");  // the planted part (the input may hold the values glued)
  // The input may teach a value that is part of the marker itself (a host name "01" from its own
  // ip=...:01:...): the marker is then rewritten too and the planted part cannot be told apart.
  if (at == std::string::npos) return 0;
  const std::string tail = lower(out.substr(at));
  for (const char* v : {"a1-b2-c4", "a1:b2:c4", "gpu7:"})
    if (tail.find(v) != std::string::npos) std::abort();
  // Once no new value is found, the same input gives the same output (one stand-in per value).
  if (stable_output(r, line) == 0) std::abort();
  return 0;
}
