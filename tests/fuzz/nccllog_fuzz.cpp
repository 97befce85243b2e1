// libFuzzer target for the NCCL log line parser and the accumulator behind `fabscope log`.
// Build: cmake -DFABSCOPE_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ...; run:
//   build/tests/fuzz/fabscope_nccllog_fuzz tests/fuzz/corpus/nccllog
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "nccllog/accumulate.hpp"
#include "nccllog/diagnose.hpp"
#include "nccllog/render.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabscope::nccllog;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // A small line cap so over-long lines and the cut path are exercised too.
  Accumulator acc;
  LineReader reader(64);
  acc.begin_input("fuzz");
  auto cb = [&](std::string_view line) { acc.add_line(line); };
  // Feed in two pieces so lines split across chunks are covered.
  std::size_t half = size / 2;
  reader.feed(text.data(), half, cb);
  reader.feed(text.data() + half, size - half, cb);
  reader.finish(cb);
  acc.end_input(reader);
  LogSummary s = acc.finish();
  Diagnosis d = diagnose(s);
  // Host names and WARN text reach a terminal: no control byte but the newline.
  const std::string shown = render_text(s, d);
  for (char c : shown)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f) std::abort();
  (void)report_json(s, d).dump(-1, ' ', false, fabscope::json::error_handler_t::replace);
  return 0;
}
