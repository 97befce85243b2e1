#pragma once
// Manual pages and shell completion, rendered from the command-line parser's own definitions
// (core::ParserSpec): pure functions over values. The fabscope-docgen tool (src/cli/tools)
// collects the definitions by running every registered command under core::DescribeScope and
// writes what these return.
#include <string>
#include <vector>

#include "core/args.hpp"

namespace fabscope::docgen {

struct CommandDoc {
  std::string name;     // "check", "env lint"
  std::string summary;  // one line: the registry's summary (NAME section, completion menus)
  core::ParserSpec spec;
};

// What `fabscope --help` prints around the registry (cli/commands.hpp).
struct TopDoc {
  std::string usage;    // "fabscope COMMAND [options]"
  std::string summary;  // the description paragraph
  std::string trailer;  // the lines after the command list
};

// "env lint" -> "fabscope-env-lint": the page's name, as in `man fabscope-env-lint`.
std::string man_name(const std::string& command);

// roff for man(7). Pages are unhyphenated and left-adjusted so that the rendered words are
// exactly --help's words (tests/unit/cli/man_help_test.cpp compares them).
std::string render_man(const CommandDoc& cmd, const std::vector<CommandDoc>& all,
                       const std::string& version);
std::string render_top_man(const TopDoc& top, const std::vector<CommandDoc>& all,
                           const std::string& version);

// Completion scripts: commands, subcommands, options, and option values where the parser
// knows them (choices; FILE and DIR metavars complete paths).
std::string render_bash(const std::vector<CommandDoc>& all, const std::string& version);
std::string render_zsh(const std::vector<CommandDoc>& all, const std::string& version);

}  // namespace fabscope::docgen
