#pragma once
// A small command-line parser shared by every subcommand, so flags look the same everywhere
// (rdma-core's manners): --root, --json, --help with examples and exit codes.
// Accepts "--name value", "--name=value", short aliases ("-b 8"), and "--" to end options.
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace fabscope::core {

// A parser's definitions as values: what --help prints, and what the manual pages and shell
// completion are generated from (src/docgen), so the three cannot drift apart.
struct OptionSpec {
  std::vector<std::string> names;  // as written: "-b", "--minbytes"
  std::string key;                 // "minbytes"
  std::string metavar;
  std::string help;
  std::string default_value;
  bool takes_value = false;
  bool repeat = false;
  std::vector<std::string> choices;  // the values it takes, when they are a closed set
  bool hidden = false;               // a test hook: parsed, never shown in help, manual or completion
};

struct PositionalSpec {
  std::string metavar;
  std::string help;
  std::vector<std::string> choices;
};

struct ParserSpec {
  std::string prog;  // "check", "env lint"
  std::string summary;
  std::vector<OptionSpec> options;
  std::vector<PositionalSpec> positionals;
  bool positional_many = false;
  std::vector<std::pair<std::string, std::string>> examples;  // command, what it does
  std::string footer;
  std::vector<std::string> subcommands;  // words after prog that select another parser
};

// "fabscope check [options] FILE...", as --help's Usage line and the manual's SYNOPSIS show it.
std::string usage_line(const ParserSpec& spec);
// An option's left column ("-b, --minbytes SIZE") and its text with the default and
// "(repeatable)" appended, as --help prints them.
std::string option_label(const OptionSpec& o);
std::string option_text(const OptionSpec& o);

// While a DescribeScope lives on a thread, ArgParser::parse records the parser's definitions
// here and returns false (as after --help) without reading any argument. Running a command's
// function under it yields its flag table without a second copy of it: this is how the manual
// pages and completion learn every command in the registry, new ones included.
class DescribeScope {
 public:
  DescribeScope();
  ~DescribeScope();
  DescribeScope(const DescribeScope&) = delete;
  DescribeScope& operator=(const DescribeScope&) = delete;
  std::vector<ParserSpec> specs;  // one per parse() call, in order
 private:
  DescribeScope* previous_;
};

class ArgParser {
 public:
  ArgParser(std::string prog, std::string summary);

  // names: "--json" or "-j,--json". The canonical name is the last (long) one, without dashes.
  ArgParser& flag(const std::string& names, const std::string& help);
  ArgParser& option(const std::string& names, const std::string& metavar, const std::string& help,
                    const std::string& default_value = "");
  // An option that may be repeated (values collected in order).
  ArgParser& multi(const std::string& names, const std::string& metavar, const std::string& help);
  ArgParser& positional(const std::string& metavar, const std::string& help, bool many = false,
                        bool required = false);
  ArgParser& example(const std::string& command, const std::string& what);
  ArgParser& footer(const std::string& text);  // e.g. the exit codes
  // The closed set of values an option (by key: "format") or a positional (by metavar:
  // "COLLECTIVE") takes, for completion. parse() does not check them: the command's own
  // parsing names a bad value with its context.
  ArgParser& choices(const std::string& key_or_metavar, std::vector<std::string> values);
  // A word that, right after the command's name, selects another parser ("env lint"):
  // declared here so that manual pages and completion find it.
  ArgParser& subcommand(const std::string& name);
  // The option (by key) is a test hook: accepted, left out of --help, the manual and completion.
  ArgParser& hidden(const std::string& key);

  // Parses argv[1..]; argv[0] is the subcommand name. Returns false when --help was printed
  // to out (the caller exits 0). Throws fabscope::UsageError naming the bad flag or value.
  bool parse(int argc, char** argv, std::ostream& out);
  bool parse(const std::vector<std::string>& args, std::ostream& out);

  bool has(const std::string& name) const;  // flag given, or option given explicitly
  std::string get(const std::string& name) const;  // value or default
  std::vector<std::string> get_all(const std::string& name) const;
  // Checked numeric getters: a UsageError names the flag and the bad value.
  long long get_int(const std::string& name, long long min, long long max) const;
  double get_double(const std::string& name, double min, double max) const;
  const std::vector<std::string>& positionals() const { return positionals_; }

  std::string help() const;
  const ParserSpec& spec() const { return spec_; }

 private:
  using Spec = OptionSpec;
  const Spec* find(const std::string& name) const;
  Spec& add(const std::string& names);

  ParserSpec spec_;
  int positional_required_ = 0;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positionals_;
};

// A command built as a program of its own (fabscope-exporter is `fabscope exporter`): help and
// usage lines name the program, and examples that start with "fabscope COMMAND" name it too.
void set_standalone_program(const std::string& command, const std::string& program);

// Text shared by every judging command's --help.
extern const char* const kExitCodesHelp;

}  // namespace fabscope::core
