#pragma once
// Accumulator: folds parsed lines of one or more inputs into a LogSummary. Memory is bounded by
// the number of distinct processes, ranks and peer pairs (each capped), never by input size.
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nccllog/summary.hpp"

namespace fabscope::nccllog {

constexpr std::size_t kMaxProcesses = 16384;
constexpr std::size_t kMaxRanks = 65536;
constexpr std::size_t kMaxPairsPerRank = 1024;

class Accumulator {
 public:
  Accumulator();
  ~Accumulator();
  Accumulator(const Accumulator&) = delete;
  Accumulator& operator=(const Accumulator&) = delete;

  void begin_input(const std::string& name);
  void add_line(std::string_view raw);
  void end_input(const LineReader& reader);  // records the reader's byte/line/cut counts
  LogSummary finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Reads one stream through a LineReader into the accumulator (begin/end_input included).
void accumulate_stream(Accumulator& acc, std::FILE* f, const std::string& name,
                       std::size_t max_line_bytes = 4096);

// The logs of `fabscope log`: each path one input ("-" is stdin, named "<stdin>"), streamed with
// bounded memory. A path that cannot be opened throws fabscope::Error naming it.
LogSummary summarize_files(const std::vector<std::string>& paths, std::size_t max_line_bytes = 4096);

// Convenience for tests and small inputs: one in-memory text as one input.
LogSummary summarize_text(std::string_view text, const std::string& name = "<text>");

// "NET/IB/0(1)/GDRDMA/Shared" -> "NET/IB/GDRDMA"; "NET/Socket/0" -> "NET/Socket";
// "P2P/indirect/3[3]/read" -> "P2P/indirect/read"; others unchanged.
std::string normalize_transport(std::string_view via);

// The device index N of "NET/Socket/N", "NET/IB/N(..)/GDRDMA", "NET/IBext_v8/N"; -1 when the
// transport is not a network one or names no index. `socket` tells which list N indexes.
int net_device_index(std::string_view via, bool& socket);

}  // namespace fabscope::nccllog
