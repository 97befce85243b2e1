#pragma once
// The metric model and the Prometheus text exposition format, version 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/): families with a name, a type and
// help text, each holding samples with labels. Rendering is a pure function over these values.
// Every metric source (node, fabric, mesh, job) builds these; the exporter serves them.
// A histogram family holds its series as the format spells them: one NAME_bucket sample per upper
// bound (label le, cumulative, "+Inf" last), NAME_sum and NAME_count (add_histogram).
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fabscope {

enum class MetricType { Counter, Gauge, Histogram };

const char* to_string(MetricType t);

using Labels = std::vector<std::pair<std::string, std::string>>;  // in the order rendered

// Counters read from sysfs are unsigned 64-bit; a double would round them above 2^53, so a sample
// keeps the integer and renders it exactly.
struct Sample {
  Labels labels;
  double value = 0;
  std::uint64_t integer = 0;
  bool is_integer = false;
  // Appended to the family's name: "_bucket", "_sum", "_count" in a histogram, else empty.
  std::string suffix;

  static Sample of(Labels labels, double v) { return Sample{std::move(labels), v, 0, false, {}}; }
  static Sample of_u64(Labels labels, std::uint64_t v) {
    return Sample{std::move(labels), static_cast<double>(v), v, true, {}};
  }
};

// Observations counted per bucket. bounds are the buckets' upper bounds, increasing; counts has
// one more entry than bounds (the last: above every bound, the +Inf bucket's own part).
struct Histogram {
  std::vector<double> bounds;
  std::vector<std::uint64_t> counts;
  double sum = 0;
  std::uint64_t count = 0;

  Histogram() = default;
  explicit Histogram(std::vector<double> upper_bounds)
      : bounds(std::move(upper_bounds)), counts(bounds.size() + 1, 0) {}
  void observe(double v);
  // Adds every observation of o (same bounds; throws fabscope::Error otherwise).
  void merge(const Histogram& o);
};


struct MetricFamily {
  std::string name;  // "fabscope_port_data_transmitted_bytes_total"
  MetricType type = MetricType::Gauge;
  std::string help;
  std::vector<Sample> samples;
};

// The samples of one histogram series: NAME_bucket{labels…,le="B"} per bound, cumulative, then
// le="+Inf", NAME_sum, NAME_count. f.type must be Histogram.
void add_histogram(MetricFamily& f, const Labels& labels, const Histogram& h);

// [a-zA-Z_:][a-zA-Z0-9_:]* and [a-zA-Z_][a-zA-Z0-9_]* (label names; "__" prefix is reserved).
bool is_valid_metric_name(std::string_view name);
bool is_valid_label_name(std::string_view name);

// Label values escape backslash, double quote and newline; help text escapes backslash and newline.
std::string escape_label_value(std::string_view v);
std::string escape_help(std::string_view v);
// Go's strconv.FormatFloat(v, 'g', -1, 64) style: shortest round-trip text, "+Inf", "-Inf", "NaN".
std::string format_value(double v);

// Appends the exposition of every family (HELP, TYPE, then samples) to out. Families without
// samples are left out. Throws fabscope::Error naming the family when a metric or label name is
// invalid, so a programming mistake never produces output Prometheus rejects.
void render_text(const std::vector<MetricFamily>& families, std::string& out);
std::string render_text(const std::vector<MetricFamily>& families);

// The Content-Type of the 0.0.4 text format.
inline constexpr const char* kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace fabscope
