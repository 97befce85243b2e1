#pragma once
// `-J FILE`: the JSON file nccl-tests 2.19.6 writes (its util.cu, file "version" 3), so tools
// built on nccl-tests' JSON read ours. Same keys, order and value forms as nccl-tests: one line,
// no spaces, doubles with six decimals, booleans as the strings "true"/"false", the root column
// as its 6-wide text, "nwrong" a double or null. fabscope's own --json (schema fabscope.bench)
// is separate and richer.
#include <string>
#include <vector>

#include "bench/results.hpp"

namespace fabscope::bench {

// What nccl-tests takes from the process rather than from the run.
struct NcclTestsJsonContext {
  std::string start_time;         // "%Y-%m-%d %H:%M:%S", local time (nccl-tests' format)
  std::string end_time;
  std::vector<std::string> args;  // the command line
  std::vector<std::string> env;   // "NAME=value", the whole environment
  int nccl_version_code = 0;      // ncclGetVersion: 22803 for 2.28.3
  std::string last_error;         // ncclGetLastError(NULL): "" when none
};

std::string nccl_tests_json(const Report& r, const NcclTestsJsonContext& ctx);

// nccl-tests' string escaping: quote, backslash, slash, tab and newline escaped; the string
// stops at the first other control or non-ASCII character.
std::string nccl_tests_json_string(const std::string& s);

}  // namespace fabscope::bench
