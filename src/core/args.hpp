#pragma once
// A small command-line parser shared by every subcommand, so flags look the same everywhere
// (rdma-core's manners): --root, --json, --help with examples and exit codes.
// Accepts "--name value", "--name=value", short aliases ("-b 8"), and "--" to end options.
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace fabscope::core {

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

 private:
  struct Spec {
    std::vector<std::string> names;  // as written: "-b", "--minbytes"
    std::string key;                 // "minbytes"
    std::string metavar;
    std::string help;
    std::string default_value;
    bool takes_value = false;
    bool repeat = false;
  };
  const Spec* find(const std::string& name) const;
  Spec& add(const std::string& names);

  std::string prog_, summary_;
  std::vector<Spec> specs_;
  std::vector<std::pair<std::string, std::string>> positional_specs_;
  bool positional_many_ = false;
  int positional_required_ = 0;
  std::vector<std::pair<std::string, std::string>> examples_;
  std::string footer_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positionals_;
};

// Text shared by every judging command's --help.
extern const char* const kExitCodesHelp;

}  // namespace fabscope::core
