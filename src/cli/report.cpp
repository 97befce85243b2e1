#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "core/args.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json.hpp"
#include "report/load.hpp"
#include "report/render.hpp"

namespace fabscope::cli {

namespace {

std::string now_utc() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}


}  // namespace

int cmd_report(int argc, char** argv) {
  core::ArgParser args("report",
                       "Write one self-contained HTML report (inline CSS and SVG, no network when opened)\n"
                       "from the JSON of doctor, check, bench, tune, cluster, rdma and fabric, nccl-tests text outputs\n"
                       "the probe mesh snapshots of `exporter --mesh` and the running jobs of `exporter --jobs`\n"
                       "(a node's saved /metrics).");
  args.option("-o,--output", "FILE", "the HTML file to write", "fabscope-report.html")
      .multi("--nccl-tests", "FILE", "an nccl-tests output (all_reduce_perf ... > FILE), or its -J JSON file")
      .multi("--mesh", "[NAME=]FILE",
             "one node's probe mesh snapshot: its saved /metrics (or that as fabscope.metrics JSON); the node is "
             "NAME, else the file name without extension; one per node")
      .multi("--job", "[NAME=]FILE",
             "one node's running jobs: the saved /metrics of `exporter --jobs` (or that as fabscope.metrics JSON); "
             "one per node, all of them one Job section; NAME names the node, else the file name without extension")
      .option("--title", "TEXT", "the page title", "fabscope report")
      .option("--docs-url", "URL",
              "prefix of the docs/checks.md links of findings: an http(s):// or file:// URL or a path, "
              "ending in '/' (default: the installed docs, " + report::default_docs_url() +
                  "; ./ for links relative to the HTML file)")
      .flag("--json", "print what was written as JSON (schema fabscope.report) instead of its path")
      .positional("FILE.json", "outputs of `doctor`, `check`, `bench`, `tune`, `cluster`, `rdma` --json, `fabric` --json or --save", true,
                  false)
      .example("fabscope report node.json bench.json -o report.html", "a node's findings and its benchmark")
      .example("fabscope report default.json tuned.json --nccl-tests nccl.txt -o cmp.html",
               "two bench runs and an nccl-tests run overlaid")
      .example("fabscope report cluster.json rdma-bw.json -o fabric.html",
               "the cluster heat map and an RDMA point-to-point run")
      .example("fabscope report sweep.json cluster.json -o where.html",
               "the fabric's picture with the suspects of `cluster --fabric sweep.json`, the heat map by leaf")
      .example("fabscope report --mesh node1.prom --mesh node2.prom --mesh node3.prom -o mesh.html",
               "the mesh's RTT heat map from each node's `curl node:9417/metrics > NODE.prom`")
      .example("fabscope report --job gpu-a.prom --job gpu-b.prom -o job.html",
               "a running job's busbw per rank and size, slow and missing ranks, from each node's "
               "`curl NODE:9417/metrics > NODE.prom` (exporter --jobs)")
      .footer("Exit codes: 0 report written, 3 usage error or an input that cannot be used (unreadable,\n"
              "empty, truncated, another schema or a newer schema_version); the message names the file.");
  if (!args.parse(argc, argv, std::cout)) return 0;
  const auto& files = args.positionals();
  const auto nccl = args.get_all("nccl-tests");
  const auto mesh = args.get_all("mesh");
  const auto job = args.get_all("job");
  if (files.empty() && nccl.empty() && mesh.empty() && job.empty())
    throw UsageError("report: no input: give FILE.json (doctor, check, bench, tune, cluster, rdma, fabric), "
                     "--nccl-tests FILE, --mesh FILE or --job FILE");
  const std::string output = args.get("output");
  if (output.empty()) throw UsageError("report: --output must name a file");

  report::Report r;
  r.title = args.get("title");
  r.docs_url = args.get("docs-url");
  report::check_docs_url(r.docs_url);
  r.generated_utc = now_utc();
  for (const auto& f : files)
    for (auto& in : report::load_json_file(f)) r.inputs.push_back(std::move(in));
  for (const auto& f : nccl)
    for (auto& in : report::load_nccl_tests_file(f)) r.inputs.push_back(std::move(in));
  for (const auto& f : mesh)
    for (auto& in : report::load_mesh_file(f)) r.inputs.push_back(std::move(in));
  for (const auto& f : job)
    for (auto& in : report::load_job_file(f)) r.inputs.push_back(std::move(in));

  report::Rendered page = report::render(r);
  core::write_output(output, page.html);

  if (args.has("json")) {
    json j{{"schema", "fabscope.report"}, {"schema_version", 1}, {"output", output},
           {"bytes", page.html.size()}, {"sections", page.sections}, {"inputs", json::array()}};
    for (const auto& in : r.inputs)
      j["inputs"].push_back({{"file", in.file},
                             {"label", in.label},
                             {"schema", in.schema},
                             {"schema_version", in.schema_version ? json(in.schema_version) : json(nullptr)}});
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << output << "\n";
  }
  return 0;
}

}  // namespace fabscope::cli
