// A report of very many findings holds at most kMaxFindingRows rows, most severe first, and says
// how many it left out (800,000 findings once made a 339 MB page).
#include <gtest/gtest.h>

#include <string>

#include "report/model.hpp"
#include "report/render.hpp"

namespace fabscope::report {

namespace {
std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}
}  // namespace

TEST(ReportFindings, ManyFindingsAreCutAtTheCapAndSaySo) {
  Report r;
  Input in;
  in.file = in.label = "node.json";
  in.schema = "fabscope.check";
  in.kind = InputKind::Node;
  in.node.hostname = "gpu7";
  const std::size_t n = kMaxFindingRows + 1234;
  for (std::size_t i = 0; i < n; ++i) {
    Finding f;
    f.id = "link.port_down";
    f.severity = i == n - 1 ? Severity::Fail : Severity::Warn;  // the most severe comes last
    f.subject = "mlx5_" + std::to_string(i);
    in.node.findings.push_back(f);
  }
  r.inputs.push_back(std::move(in));
  const std::string html = render_findings(r);
  EXPECT_EQ(count(html, "<tr class=\"finding\""), kMaxFindingRows);
  EXPECT_NE(html.find("1234 more findings are not shown"), std::string::npos);
  EXPECT_NE(html.find("data-findings=\"" + std::to_string(n) + "\""), std::string::npos);
  EXPECT_NE(html.find(">mlx5_" + std::to_string(n - 1) + "<"), std::string::npos);  // the fail is kept
}

}  // namespace fabscope::report
