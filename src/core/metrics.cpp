#include "core/metrics.hpp"

#include <charconv>
#include <cmath>

#include "core/error.hpp"

namespace fabscope {

const char* to_string(MetricType t) {
  switch (t) {
    case MetricType::Counter: return "counter";
    case MetricType::Histogram: return "histogram";
    case MetricType::Gauge: break;
  }
  return "gauge";
}

void Histogram::observe(double v) {
  std::size_t i = 0;
  while (i < bounds.size() && v > bounds[i]) ++i;  // le: a value on a bound counts in its bucket
  ++counts[i];
  sum += v;
  ++count;
}

void Histogram::merge(const Histogram& o) {
  if (o.bounds != bounds) throw Error("histograms with different bucket bounds cannot be merged");
  for (std::size_t i = 0; i < counts.size(); ++i) counts[i] += o.counts[i];
  sum += o.sum;
  count += o.count;
}

void add_histogram(MetricFamily& f, const Labels& labels, const Histogram& h) {
  if (f.type != MetricType::Histogram) throw Error("metric " + f.name + " is not a histogram");
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i <= h.bounds.size(); ++i) {
    cumulative += i < h.counts.size() ? h.counts[i] : 0;
    Labels l = labels;
    l.emplace_back("le", i < h.bounds.size() ? format_value(h.bounds[i]) : "+Inf");
    auto s = Sample::of_u64(std::move(l), cumulative);
    s.suffix = "_bucket";
    f.samples.push_back(std::move(s));
  }
  auto sum = Sample::of(labels, h.sum);
  sum.suffix = "_sum";
  f.samples.push_back(std::move(sum));
  auto count = Sample::of_u64(labels, h.count);
  count.suffix = "_count";
  f.samples.push_back(std::move(count));
}

namespace {
bool is_alpha_(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

bool is_valid_metric_name(std::string_view name) {
  if (name.empty() || !(is_alpha_(name[0]) || name[0] == ':')) return false;
  for (char c : name)
    if (!(is_alpha_(c) || is_digit(c) || c == ':')) return false;
  return true;
}

bool is_valid_label_name(std::string_view name) {
  if (name.empty() || !is_alpha_(name[0]) || name.substr(0, 2) == "__") return false;
  for (char c : name)
    if (!(is_alpha_(c) || is_digit(c))) return false;
  return true;
}

std::string escape_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string escape_help(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  // Whole numbers (rates in bit/s, state codes) print as integers: shortest form would be "4e+10".
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    auto r = std::to_chars(buf, buf + sizeof buf, static_cast<long long>(v));
    return std::string(buf, r.ptr);
  }
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

void render_text(const std::vector<MetricFamily>& families, std::string& out) {
  char num[32];
  for (const auto& f : families) {
    if (f.samples.empty()) continue;
    if (!is_valid_metric_name(f.name)) throw Error("metric name is not valid: \"" + f.name + "\"");
    out.append("# HELP ").append(f.name).append(" ").append(escape_help(f.help)).append("\n");
    out.append("# TYPE ").append(f.name).append(" ").append(to_string(f.type)).append("\n");
    for (const auto& s : f.samples) {
      out.append(f.name).append(s.suffix);
      if (!s.labels.empty()) {
        out += '{';
        bool first = true;
        for (const auto& [k, v] : s.labels) {
          if (!is_valid_label_name(k))
            throw Error("metric " + f.name + ": label name is not valid: \"" + k + "\"");
          if (!first) out += ',';
          first = false;
          out.append(k).append("=\"").append(escape_label_value(v)).append("\"");
        }
        out += '}';
      }
      out += ' ';
      if (s.is_integer) {
        auto r = std::to_chars(num, num + sizeof num, s.integer);
        out.append(num, r.ptr);
      } else {
        out.append(format_value(s.value));
      }
      out += '\n';
    }
  }
}

std::string render_text(const std::vector<MetricFamily>& families) {
  std::string out;
  render_text(families, out);
  return out;
}

}  // namespace fabscope
