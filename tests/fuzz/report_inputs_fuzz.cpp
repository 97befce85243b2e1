// libFuzzer target for what `fabscope report` reads: a JSON output of a fabscope command (check,
// doctor, bench, tune, cluster, rdma, fabric, a mesh or job snapshot as fabscope.metrics; first
// byte even; nccl-tests' -J JSON too), an nccl-tests output (first byte 1 modulo 4: its text, or its
// -J JSON) or a node's saved /metrics read
// as a mesh snapshot (first byte 3 modulo 8) or as its running jobs (first byte 7 modulo 8; both
// through the exposition reader), then the HTML page rendered from it, alone and beside a second
// copy (the overlay and comparison paths; for a mesh, a second snapshot of the same node; for a
// job, every rank given twice).
// A bad file must be refused with fabscope::Error, the one exception the CLI reports; any other
// exception, a crash, a page carrying markup from the input or a link that is not to the page or
// to the docs (a finding's "docs": "javascript:...") is a bug.
// Build and run: scripts/fuzz.sh report_inputs (or cmake --preset fuzz; see tests/fuzz/README).
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "report/load.hpp"
#include "report/render.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabscope;
  using namespace fabscope::report;
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  Report r;
  r.generated_utc = "2026-11-23T15:00:00Z";
  try {
    if (data[0] % 2 == 0) {
      r.inputs = inputs_from_json_text("runs/fuzz.json", text);  // one document, or JSON Lines of rdma sessions
    } else if (data[0] % 4 == 1) {
      r.inputs = inputs_from_nccl_tests_text("runs/fuzz.txt", text);
      if (r.inputs.empty()) std::abort();  // no table is an error, never an empty result
    } else if (data[0] % 8 == 3) {
      r.inputs.push_back(input_from_mesh_text("runs/node1.prom", "node1", text));
      if (r.inputs.back().kind != InputKind::Mesh) std::abort();
    } else {
      r.inputs.push_back(input_from_job_text("runs/gpu-a.prom", "gpu-a", text));
      if (r.inputs.back().kind != InputKind::Job) std::abort();
    }
  } catch (const Error&) {
    return 0;
  }
  Rendered one = render(r);
  std::vector<Input> twice = r.inputs;
  twice.insert(twice.end(), r.inputs.begin(), r.inputs.end());
  r.inputs = std::move(twice);
  Rendered two = render(r);
  for (const Rendered* page : {&one, &two}) {
    if (page->html.empty()) std::abort();
    // The page is script-free by design; a "<script" in it came from the input unescaped.
    std::string lower = page->html;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower.find("<script") != std::string::npos) std::abort();
    // A link goes to a section of the page or to a page of the docs, nowhere else.
    for (std::size_t at = lower.find("href="); at != std::string::npos; at = lower.find("href=", at + 5)) {
      const std::size_t open = at + 5;
      // "href=" followed by anything but a quote is text from the input, escaped (href=&quot;).
      if (open >= page->html.size() || page->html[open] != '"') continue;
      const std::size_t close = page->html.find('"', open + 1);
      if (close == std::string::npos) std::abort();
      std::string href = page->html.substr(open + 1, close - open - 1);
      if (href.starts_with(default_docs_url())) href.erase(0, default_docs_url().size());  // the docs' base
      if (!href.starts_with("#") && !docs_path_is_linkable(href)) std::abort();
    }
  }
  return 0;
}
