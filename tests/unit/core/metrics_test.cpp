#include "core/metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace fabscope {
namespace {

TEST(Metrics, LabelValue_EscapesBackslashQuoteAndNewline) {
  EXPECT_EQ(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
}

TEST(Metrics, Help_EscapesBackslashAndNewlineButNotQuotes) {
  EXPECT_EQ(escape_help("say \"hi\"\\\n"), "say \"hi\"\\\\\\n");
}

TEST(Metrics, MetricName_AcceptsColonsAndRejectsLeadingDigit) {
  EXPECT_TRUE(is_valid_metric_name("job:fabscope_port_utilisation:ratio"));
  EXPECT_FALSE(is_valid_metric_name("9lives"));
  EXPECT_FALSE(is_valid_metric_name("has-dash"));
  EXPECT_FALSE(is_valid_metric_name(""));
}

TEST(Metrics, LabelName_RejectsReservedPrefixAndColon) {
  EXPECT_TRUE(is_valid_label_name("device"));
  EXPECT_FALSE(is_valid_label_name("__name__"));
  EXPECT_FALSE(is_valid_label_name("a:b"));
}

TEST(Metrics, Value_FormatsSpecialsAsPrometheusDoes) {
  EXPECT_EQ(format_value(0.5), "0.5");
  EXPECT_EQ(format_value(1e11), "100000000000");
  EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(format_value(std::nan("")), "NaN");
}

TEST(Metrics, Render_WritesHelpTypeAndSamplesInOrder) {
  std::vector<MetricFamily> fams = {
      {"fabscope_x_total", MetricType::Counter, "An x.", {Sample::of_u64({{"device", "mlx5_0"}, {"port", "1"}}, 7)}}};
  EXPECT_EQ(render_text(fams),
            "# HELP fabscope_x_total An x.\n"
            "# TYPE fabscope_x_total counter\n"
            "fabscope_x_total{device=\"mlx5_0\",port=\"1\"} 7\n");
}

TEST(Metrics, Render_KeepsU64CountersExactAbove2Pow53) {
  std::vector<MetricFamily> fams = {
      {"c_total", MetricType::Counter, "h", {Sample::of_u64({}, 18446744073709551615ull)}}};
  EXPECT_NE(render_text(fams).find("c_total 18446744073709551615\n"), std::string::npos);
}

TEST(Metrics, Render_LeavesOutFamiliesWithoutSamples) {
  std::vector<MetricFamily> fams = {{"empty", MetricType::Gauge, "h", {}}};
  EXPECT_EQ(render_text(fams), "");
}

TEST(Metrics, Render_EscapesHostileLabelValues) {
  std::vector<MetricFamily> fams = {{"g", MetricType::Gauge, "h", {Sample::of({{"fw_ver", "1\"}\n evil 1"}}, 1)}}};
  EXPECT_NE(render_text(fams).find("g{fw_ver=\"1\\\"}\\n evil 1\"} 1\n"), std::string::npos);
}

TEST(Metrics, Render_ThrowsNamingAnInvalidLabelName) {
  std::vector<MetricFamily> fams = {{"g", MetricType::Gauge, "h", {Sample::of({{"bad-name", "v"}}, 1)}}};
  try {
    render_text(fams);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad-name"), std::string::npos);
  }
}

}  // namespace
}  // namespace fabscope
