#include "report/exposition.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace fabscope::report {

const std::string* ExpoSample::label(std::string_view key) const {
  for (const auto& [k, v] : labels)
    if (k == key) return &v;
  return nullptr;
}

bool parse_expo_value(std::string_view s, double& out) {
  if (s.empty() || s.size() > 64) return false;
  std::string l = core::lower(std::string(s));
  if (l == "+inf" || l == "inf") return out = std::numeric_limits<double>::infinity(), true;
  if (l == "-inf") return out = -std::numeric_limits<double>::infinity(), true;
  if (l == "nan") return out = std::numeric_limits<double>::quiet_NaN(), true;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) return false;
  std::string_view t = s;
  if (t.front() == '+') t.remove_prefix(1);  // Go's ParseFloat takes a sign; from_chars only '-'
  if (t.empty() || t.front() == '+') return false;
  double v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) {  // beyond a double: the sign's infinity, as Go does
    v = t.front() == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    // from_chars leaves end at the number's end on overflow, too
  } else if (ec != std::errc()) {
    return false;
  }
  if (end != t.data() + t.size()) return false;
  out = v;
  return true;
}

namespace {

bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }
bool blank(char c) { return c == ' ' || c == '\t'; }

// One line, read left to right; every error names the line and what was expected there.
class LineReader {
 public:
  LineReader(const std::string& file, std::size_t no, std::string_view line) : file_(file), no_(no), s_(line) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(file_ + ":" + std::to_string(no_) + ": " + what);
  }
  bool done() const { return i_ >= s_.size(); }
  char peek() const { return done() ? '\0' : s_[i_]; }
  void skip_blanks() {
    while (!done() && blank(s_[i_])) ++i_;
  }
  // A metric name (colons allowed) or a label name (no colon).
  std::string_view name(bool metric) {
    std::size_t b = i_;
    if (done() || !(metric ? name_start(s_[i_]) : name_start(s_[i_]) && s_[i_] != ':')) return {};
    while (!done() && (metric ? name_char(s_[i_]) : name_char(s_[i_]) && s_[i_] != ':')) ++i_;
    return s_.substr(b, i_ - b);
  }
  std::string_view token() {  // up to the next blank
    std::size_t b = i_;
    while (!done() && !blank(s_[i_])) ++i_;
    return s_.substr(b, i_ - b);
  }
  std::string quoted(std::string_view label) {  // after the opening quote, to the closing one
    std::string v;
    for (;;) {
      if (done()) fail("label '" + std::string(label) + "': the value's closing quote is missing");
      char c = s_[i_++];
      if (c == '"') return v;
      if (c != '\\') {
        v += c;
        continue;
      }
      if (done()) fail("label '" + std::string(label) + "': a backslash ends the line");
      char e = s_[i_++];
      if (e == '\\') v += '\\';
      else if (e == '"') v += '"';
      else if (e == 'n') v += '\n';
      else fail("label '" + std::string(label) + "': escape \\" + core::printable(std::string(1, e)) +
                " is not one of \\\\, \\\" and \\n");
    }
  }
  bool eat(char c) {
    if (peek() != c) return false;
    ++i_;
    return true;
  }

 private:
  const std::string& file_;
  std::size_t no_;
  std::string_view s_;
  std::size_t i_ = 0;
};

std::string shown(std::string_view s) { return core::printable(s.substr(0, 60)) + (s.size() > 60 ? "..." : ""); }

void comment_line(LineReader& r) {
  r.skip_blanks();
  std::string_view word = r.token();
  if (word != "HELP" && word != "TYPE") return;  // any other comment
  r.skip_blanks();
  std::string_view metric = r.name(true);
  if (metric.empty()) r.fail("# " + std::string(word) + ": expected a metric name");
  if (!r.done() && !blank(r.peek()))
    r.fail("# " + std::string(word) + ": '" + shown(metric) + "' is followed by '" + shown(std::string(1, r.peek())) + "'");
  if (word == "HELP") return;  // the docstring is free text
  r.skip_blanks();
  std::string_view type = r.token();
  if (type != "counter" && type != "gauge" && type != "histogram" && type != "summary" && type != "untyped")
    r.fail("# TYPE " + std::string(metric) + ": '" + shown(type) +
           "' is not counter, gauge, histogram, summary or untyped");
  r.skip_blanks();
  if (!r.done()) r.fail("# TYPE " + std::string(metric) + ": text after the type");
}

}  // namespace

std::vector<ExpoSample> parse_exposition(const std::string& file, std::string_view text,
                                         const std::function<bool(std::string_view)>& keep, const ExpoLimits& limits) {
  std::vector<ExpoSample> out;
  std::size_t no = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    ++no;
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.size() > limits.max_line_bytes)
      throw Error(file + ":" + std::to_string(no) + ": line longer than " + std::to_string(limits.max_line_bytes) +
                  " bytes");
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // saved with CRLF
    LineReader r(file, no, line);
    r.skip_blanks();
    if (r.done()) continue;
    if (r.eat('#')) {
      comment_line(r);
      continue;
    }
    std::string_view name = r.name(true);
    if (name.empty()) r.fail("expected a metric name, a comment or an empty line, got '" + shown(line) + "'");
    const bool kept = keep(name);
    ExpoSample s;
    s.line = no;
    if (kept) s.name = std::string(name);
    r.skip_blanks();
    if (r.eat('{')) {
      std::vector<std::string> seen;
      for (;;) {
        r.skip_blanks();
        if (r.eat('}')) break;
        std::string_view key = r.name(false);
        if (key.empty()) r.fail(std::string(name) + ": expected a label name or '}'");
        r.skip_blanks();
        if (!r.eat('=')) r.fail(std::string(name) + ": label '" + shown(key) + "': expected '='");
        r.skip_blanks();
        if (!r.eat('"')) r.fail(std::string(name) + ": label '" + shown(key) + "': expected a quoted value");
        std::string value = r.quoted(key);
        for (const auto& k : seen)
          if (k == key) r.fail(std::string(name) + ": label '" + shown(key) + "' twice");
        if (seen.size() >= limits.max_labels)
          r.fail(std::string(name) + ": more than " + std::to_string(limits.max_labels) + " labels");
        seen.emplace_back(key);
        if (kept) s.labels.emplace_back(std::string(key), std::move(value));
        r.skip_blanks();
        if (r.eat(',')) continue;
        if (r.eat('}')) break;
        r.fail(std::string(name) + ": expected ',' or '}' after label '" + shown(key) + "'");
      }
      r.skip_blanks();
    }
    std::string_view v = r.token();
    if (v.empty()) r.fail(std::string(name) + ": the value is missing");
    if (!parse_expo_value(v, s.value)) r.fail(std::string(name) + ": value '" + shown(v) + "' is not a number");
    r.skip_blanks();
    if (!r.done()) {
      std::string_view ts = r.token();
      std::int64_t t = 0;
      auto [p, ec] = std::from_chars(ts.data(), ts.data() + ts.size(), t);
      if (ec != std::errc() || p != ts.data() + ts.size())
        r.fail(std::string(name) + ": timestamp '" + shown(ts) + "' is not an integer (milliseconds)");
      r.skip_blanks();
      if (!r.done()) r.fail(std::string(name) + ": text after the timestamp");
    }
    if (!kept) continue;
    if (out.size() >= limits.max_kept)
      r.fail("more than " + std::to_string(limits.max_kept) + " samples of the kind read here");
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace fabscope::report
