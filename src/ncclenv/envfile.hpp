#pragma once
// Parsing of KEY=VALUE files: nccl.conf (as NCCL reads it) and env-files (docker --env-file,
// systemd EnvironmentFile=). Never throws on content: a line that the consumer would misread
// becomes an env.syntax finding naming file:line, and parsing goes on.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/finding.hpp"

namespace fabscope::ncclenv {

// One setting and where it came from. line is 1-based; 0 for the process environment.
struct EnvEntry {
  std::string source;  // "environment", "/etc/nccl.conf", "job.env"
  int line = 0;
  std::string key;
  std::string value;

  std::string where() const { return line > 0 ? source + ":" + std::to_string(line) : source; }
};

// NcclConf: NCCL's own reader (src/misc/param.cc): a line starting with '#' is a comment, the
// name is everything before the first '=' (blanks included), the value everything after it,
// quotes kept, names and values cut at 1023 bytes; the first setting of a name wins.
// EnvFile: docker/systemd env-files: blank and '#' lines skipped; the last setting wins.
enum class Dialect { NcclConf, EnvFile };

struct ParsedFile {
  std::vector<EnvEntry> entries;  // in file order; keys without "export ", values without quotes
  std::vector<Finding> findings;  // env.syntax (and nothing else)
};

constexpr std::size_t kNcclValueMax = 1023;     // NCCL's envValue[1024]
constexpr std::size_t kMaxLineBytes = 64 * 1024;  // longer lines are cut before parsing
constexpr std::size_t kMaxSyntaxFindings = 20;    // per file; the rest are counted in one more

ParsedFile parse_env_text(std::string_view text, const std::string& source, Dialect dialect);

// A valid environment variable name: [A-Za-z_][A-Za-z0-9_]*.
bool valid_name(std::string_view name);

}  // namespace fabscope::ncclenv
