#include "core/args.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "core/error.hpp"
#include "core/root.hpp"

namespace fabscope::core {

const char* const kExitCodesHelp =
    "Exit codes: 0 nothing above info, 1 warnings, 2 failures, 3 usage or internal error.";

namespace {
thread_local DescribeScope* g_describe = nullptr;
}  // namespace

DescribeScope::DescribeScope() : previous_(g_describe) { g_describe = this; }
DescribeScope::~DescribeScope() { g_describe = previous_; }

ArgParser::ArgParser(std::string prog, std::string summary) {
  spec_.prog = std::move(prog);
  spec_.summary = std::move(summary);
  flag("-h,--help", "show this help and exit");
}

ArgParser::Spec& ArgParser::add(const std::string& names) {
  Spec s;
  s.names = split(names, ',');
  std::string last = s.names.back();
  while (!last.empty() && last.front() == '-') last.erase(0, 1);
  s.key = last;
  spec_.options.push_back(std::move(s));
  return spec_.options.back();
}

ArgParser& ArgParser::flag(const std::string& names, const std::string& help) {
  add(names).help = help;
  return *this;
}

ArgParser& ArgParser::option(const std::string& names, const std::string& metavar,
                             const std::string& help, const std::string& default_value) {
  auto& s = add(names);
  s.metavar = metavar;
  s.help = help;
  s.default_value = default_value;
  s.takes_value = true;
  return *this;
}

ArgParser& ArgParser::multi(const std::string& names, const std::string& metavar,
                            const std::string& help) {
  auto& s = add(names);
  s.metavar = metavar;
  s.help = help;
  s.takes_value = true;
  s.repeat = true;
  return *this;
}

ArgParser& ArgParser::positional(const std::string& metavar, const std::string& help, bool many,
                                 bool required) {
  spec_.positionals.push_back({metavar, help, {}});
  if (many) spec_.positional_many = true;
  if (required) ++positional_required_;
  return *this;
}

ArgParser& ArgParser::example(const std::string& command, const std::string& what) {
  spec_.examples.emplace_back(command, what);
  return *this;
}

ArgParser& ArgParser::footer(const std::string& text) {
  spec_.footer = text;
  return *this;
}

ArgParser& ArgParser::choices(const std::string& key_or_metavar, std::vector<std::string> values) {
  for (auto& o : spec_.options)
    if (o.key == key_or_metavar && o.takes_value) {
      o.choices = std::move(values);
      return *this;
    }
  for (auto& p : spec_.positionals)
    if (p.metavar == key_or_metavar) {
      p.choices = std::move(values);
      return *this;
    }
  // A definition error in the program, not the user's: no flag or argument of that name.
  throw std::logic_error(spec_.prog + ": choices() for '" + key_or_metavar +
                         "', which is no option taking a value and no argument");
}

ArgParser& ArgParser::subcommand(const std::string& name) {
  spec_.subcommands.push_back(name);
  return *this;
}

const ArgParser::Spec* ArgParser::find(const std::string& name) const {
  for (const auto& s : spec_.options)
    for (const auto& n : s.names)
      if (n == name) return &s;
  return nullptr;
}

bool ArgParser::parse(int argc, char** argv, std::ostream& out) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return parse(args, out);
}

bool ArgParser::parse(const std::vector<std::string>& args, std::ostream& out) {
  if (g_describe) {
    g_describe->specs.push_back(spec_);
    return false;
  }
  bool only_positionals = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (only_positionals || a == "-" || a.empty() || a[0] != '-') {
      positionals_.push_back(a);
      continue;
    }
    if (a == "--") {
      only_positionals = true;
      continue;
    }
    std::string name = a, value;
    bool inline_value = false;
    if (auto eq = a.find('='); eq != std::string::npos && starts_with(a, "--")) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      inline_value = true;
    }
    const Spec* s = find(name);
    if (!s) throw UsageError(spec_.prog + ": unknown option '" + name + "' (see " + spec_.prog + " --help)");
    if (s->key == "help") {
      out << help();
      return false;
    }
    if (s->takes_value) {
      if (!inline_value) {
        if (i + 1 >= args.size())
          throw UsageError(spec_.prog + ": option '" + name + "' needs a value (" + s->metavar + ")");
        value = args[++i];
      }
      auto& slot = values_[s->key];
      if (!s->repeat) slot.clear();
      slot.push_back(value);
    } else {
      if (inline_value) throw UsageError(spec_.prog + ": option '" + name + "' takes no value");
      values_[s->key].push_back("1");
    }
  }
  if (static_cast<int>(positionals_.size()) < positional_required_)
    throw UsageError(spec_.prog + ": missing " + spec_.positionals.front().metavar + " (see --help)");
  if (!spec_.positional_many && positionals_.size() > spec_.positionals.size())
    throw UsageError(spec_.prog + ": unexpected argument '" + positionals_[spec_.positionals.size()] +
                     "' (see " + spec_.prog + " --help)");
  return true;
}

bool ArgParser::has(const std::string& name) const { return values_.count(name) > 0; }

std::string ArgParser::get(const std::string& name) const {
  if (auto it = values_.find(name); it != values_.end() && !it->second.empty())
    return it->second.back();
  for (const auto& s : spec_.options)
    if (s.key == name) return s.default_value;
  return "";
}

std::vector<std::string> ArgParser::get_all(const std::string& name) const {
  if (auto it = values_.find(name); it != values_.end()) return it->second;
  return {};
}

long long ArgParser::get_int(const std::string& name, long long min, long long max) const {
  auto text = get(name);
  auto v = parse_int(text);
  if (!v || *v < min || *v > max) {
    throw UsageError(spec_.prog + ": --" + name + " '" + text + "' is not a whole number from " +
                     std::to_string(min) + " to " + std::to_string(max));
  }
  return *v;
}

double ArgParser::get_double(const std::string& name, double min, double max) const {
  auto text = get(name);
  auto v = parse_double(text);
  if (!v || !std::isfinite(*v) || *v < min || *v > max) {
    std::ostringstream os;
    os << spec_.prog << ": --" << name << " '" << text << "' is not a number from " << min << " to "
       << max;
    throw UsageError(os.str());
  }
  return *v;
}

namespace {
constexpr std::size_t kHelpWidth = 100;  // every command's output fits 100 columns, --help too

// Wraps each line of text that does not fit in kHelpWidth; lines that fit keep their breaks and
// spacing (hand-made layouts stay). The first output line starts with first, the others with
// indent.
std::string wrap_lines(const std::string& text, const std::string& first, const std::string& indent) {
  std::string out;
  std::istringstream lines(text);
  std::string line;
  bool at_first = true;
  while (std::getline(lines, line)) {
    std::string cur = at_first ? first : indent;
    at_first = false;
    if (cur.size() + line.size() <= kHelpWidth) {
      out += cur + line + "\n";
      continue;
    }
    std::istringstream words(line);
    std::string word;
    bool empty = true;
    while (words >> word) {
      if (!empty && cur.size() + 1 + word.size() > kHelpWidth) {
        out += cur + "\n";
        cur = indent;
        empty = true;
      }
      if (!empty) cur += ' ';
      cur += word;
      empty = false;
    }
    out += cur + "\n";
  }
  return out;
}
}  // namespace

struct Standalone {
  std::string command, program;
};
Standalone& standalone() {
  static Standalone s;
  return s;
}

// "fabscope exporter --jobs" -> "fabscope-exporter --jobs" in a standalone program's help.
std::string as_run(const std::string& text) {
  const auto& s = standalone();
  if (s.command.empty()) return text;
  const std::string from = "fabscope " + s.command;
  if (text.rfind(from, 0) == 0 && (text.size() == from.size() || text[from.size()] == ' '))
    return s.program + text.substr(from.size());
  return text;
}

std::string usage_line(const ParserSpec& spec) {
  std::string line = as_run("fabscope " + spec.prog) + " [options]";
  for (const auto& p : spec.positionals) line += " " + p.metavar;
  if (spec.positional_many) line += "...";
  return line;
}

std::string option_label(const OptionSpec& o) {
  std::string left;
  for (std::size_t i = 0; i < o.names.size(); ++i) left += (i ? ", " : "") + o.names[i];
  if (o.takes_value) left += " " + o.metavar;
  return left;
}

std::string option_text(const OptionSpec& o) {
  std::string text = o.help;
  if (!o.default_value.empty()) text += " (default: " + o.default_value + ")";
  if (o.repeat) text += " (repeatable)";
  return text;
}

ArgParser& ArgParser::hidden(const std::string& key) {
  for (auto& o : spec_.options)
    if (o.key == key) o.hidden = true;
  return *this;
}

void set_standalone_program(const std::string& command, const std::string& program) {
  standalone() = Standalone{command, program};
}

std::string ArgParser::help() const {
  std::ostringstream os;
  os << "Usage: " << usage_line(spec_);
  os << "\n\n" << wrap_lines(spec_.summary, "", "") << "\nOptions:\n";
  const std::string col(28, ' ');
  // "(default: X)" is never split across lines: its spaces are held together while wrapping.
  auto unbroken = [](std::string t) {
    for (auto& c : t)
      if (c == ' ') c = '\x1f';
    return t;
  };
  auto spaces_back = [](std::string t) {
    for (auto& c : t)
      if (c == '\x1f') c = ' ';
    return t;
  };
  for (const auto& s : spec_.options) {
    if (s.hidden) continue;
    const std::string left = option_label(s);
    std::string text = option_text(s);
    // Every "(default: ...)" of at most 60 columns, the appended one or one in the help text.
    for (std::size_t at = text.find("(default:"); at != std::string::npos; at = text.find("(default:", at + 1)) {
      const auto close = text.find(')', at);
      if (close != std::string::npos && close - at <= 60)
        text.replace(at, close - at + 1, unbroken(text.substr(at, close - at + 1)));
    }
    if (left.size() >= 26) os << "  " << left << "\n" << spaces_back(wrap_lines(text, col, col));
    else os << spaces_back(wrap_lines(text, "  " + left + std::string(26 - left.size(), ' '), col));
  }
  if (!spec_.positionals.empty()) {
    os << "\nArguments:\n";
    for (const auto& p : spec_.positionals) {
      if (p.metavar.size() >= 26) os << "  " << p.metavar << "\n" << wrap_lines(p.help, col, col);
      else os << wrap_lines(p.help, "  " + p.metavar + std::string(26 - p.metavar.size(), ' '), col);
    }
  }
  if (!spec_.examples.empty()) {
    os << "\nExamples:\n";
    // Commands stay on one line (they are pasted); what they do wraps.
    for (const auto& [cmd, what] : spec_.examples) os << "  " << as_run(cmd) << "\n" << wrap_lines(what, "      ", "      ");
  }
  if (!spec_.footer.empty()) os << "\n" << wrap_lines(spec_.footer, "", "");
  return os.str();
}

}  // namespace fabscope::core
