#include "core/args.hpp"

#include <cmath>
#include <sstream>

#include "core/error.hpp"
#include "core/root.hpp"

namespace fabscope::core {

const char* const kExitCodesHelp =
    "Exit codes: 0 nothing above info, 1 warnings, 2 failures, 3 usage or internal error.";

ArgParser::ArgParser(std::string prog, std::string summary)
    : prog_(std::move(prog)), summary_(std::move(summary)) {
  flag("-h,--help", "show this help and exit");
}

ArgParser::Spec& ArgParser::add(const std::string& names) {
  Spec s;
  s.names = split(names, ',');
  std::string last = s.names.back();
  while (!last.empty() && last.front() == '-') last.erase(0, 1);
  s.key = last;
  specs_.push_back(std::move(s));
  return specs_.back();
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
  positional_specs_.emplace_back(metavar, help);
  if (many) positional_many_ = true;
  if (required) ++positional_required_;
  return *this;
}

ArgParser& ArgParser::example(const std::string& command, const std::string& what) {
  examples_.emplace_back(command, what);
  return *this;
}

ArgParser& ArgParser::footer(const std::string& text) {
  footer_ = text;
  return *this;
}

const ArgParser::Spec* ArgParser::find(const std::string& name) const {
  for (const auto& s : specs_)
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
    if (!s) throw UsageError(prog_ + ": unknown option '" + name + "' (see " + prog_ + " --help)");
    if (s->key == "help") {
      out << help();
      return false;
    }
    if (s->takes_value) {
      if (!inline_value) {
        if (i + 1 >= args.size())
          throw UsageError(prog_ + ": option '" + name + "' needs a value (" + s->metavar + ")");
        value = args[++i];
      }
      auto& slot = values_[s->key];
      if (!s->repeat) slot.clear();
      slot.push_back(value);
    } else {
      if (inline_value) throw UsageError(prog_ + ": option '" + name + "' takes no value");
      values_[s->key].push_back("1");
    }
  }
  if (static_cast<int>(positionals_.size()) < positional_required_)
    throw UsageError(prog_ + ": missing " + positional_specs_.front().first + " (see --help)");
  if (!positional_many_ && positionals_.size() > positional_specs_.size())
    throw UsageError(prog_ + ": unexpected argument '" + positionals_[positional_specs_.size()] +
                     "' (see " + prog_ + " --help)");
  return true;
}

bool ArgParser::has(const std::string& name) const { return values_.count(name) > 0; }

std::string ArgParser::get(const std::string& name) const {
  if (auto it = values_.find(name); it != values_.end() && !it->second.empty())
    return it->second.back();
  for (const auto& s : specs_)
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
    throw UsageError(prog_ + ": --" + name + " '" + text + "' is not a whole number from " +
                     std::to_string(min) + " to " + std::to_string(max));
  }
  return *v;
}

double ArgParser::get_double(const std::string& name, double min, double max) const {
  auto text = get(name);
  auto v = parse_double(text);
  if (!v || !std::isfinite(*v) || *v < min || *v > max) {
    std::ostringstream os;
    os << prog_ << ": --" << name << " '" << text << "' is not a number from " << min << " to "
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

std::string ArgParser::help() const {
  std::ostringstream os;
  os << "Usage: fabscope " << prog_ << " [options]";
  for (const auto& [metavar, _] : positional_specs_) os << ' ' << metavar;
  if (positional_many_) os << "...";
  os << "\n\n" << wrap_lines(summary_, "", "") << "\nOptions:\n";
  const std::string col(28, ' ');
  for (const auto& s : specs_) {
    std::string left;
    for (std::size_t i = 0; i < s.names.size(); ++i) left += (i ? ", " : "") + s.names[i];
    if (s.takes_value) left += " " + s.metavar;
    std::string text = s.help;
    if (!s.default_value.empty()) text += " (default: " + s.default_value + ")";
    if (s.repeat) text += " (repeatable)";
    if (left.size() >= 26) os << "  " << left << "\n" << wrap_lines(text, col, col);
    else os << wrap_lines(text, "  " + left + std::string(26 - left.size(), ' '), col);
  }
  if (!positional_specs_.empty()) {
    os << "\nArguments:\n";
    for (const auto& [metavar, h] : positional_specs_) {
      if (metavar.size() >= 26) os << "  " << metavar << "\n" << wrap_lines(h, col, col);
      else os << wrap_lines(h, "  " + metavar + std::string(26 - metavar.size(), ' '), col);
    }
  }
  if (!examples_.empty()) {
    os << "\nExamples:\n";
    // Commands stay on one line (they are pasted); what they do wraps.
    for (const auto& [cmd, what] : examples_) os << "  " << cmd << "\n" << wrap_lines(what, "      ", "      ");
  }
  if (!footer_.empty()) os << "\n" << wrap_lines(footer_, "", "");
  return os.str();
}

}  // namespace fabscope::core
