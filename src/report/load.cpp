#include "report/load.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/error.hpp"
#include "core/fields.hpp"
#include "core/files.hpp"
#include "core/strings.hpp"
#include "report/metric_samples.hpp"
#include "report/nccl_tests.hpp"
#include "tune/saved_result.hpp"

namespace fabscope::report {

const std::vector<KnownSchema>& known_schemas() {
  static const std::vector<KnownSchema> k = {
      {"fabscope.check", 1, InputKind::Node},
      {"fabscope.doctor", 1, InputKind::Node},
      {"fabscope.bench", 2, InputKind::Bench},  // 2: wall timer by default, -N cycles; the keys read are in both
      {"fabscope.tune", 1, InputKind::Tune},
      {"fabscope.cluster", cluster::kClusterSchemaVersion, InputKind::Cluster},
      {"fabscope.rdma", rdma::Result::kSchemaVersion, InputKind::Rdma},
      {"fabscope.fabric", fabric::kFabricSchemaVersion, InputKind::Fabric},
      {"fabscope.metrics", 1, InputKind::Mesh},  // the `exporter --once --json` layout: its mesh or job series
  };
  return k;
}

namespace {

std::string known_list() {
  std::string s;
  for (const auto& k : known_schemas()) s += (s.empty() ? "" : ", ") + std::string(k.name);
  return s;
}

}  // namespace

std::string label_for(const std::string& path) {
  std::string stem = std::filesystem::path(path).stem().string();
  return stem.empty() ? path : stem;
}

Input metrics_input(const std::string& file, const std::string& node, std::string_view text, InputKind kind,
                    const std::string& not_what) {
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i < text.size() && text[i] == '{') {  // JSON: the fabscope.metrics layout
    Input in = input_from_json_text(file, text, kind);
    if (in.kind != kind)
      throw Error(file + ": schema " + in.schema + " is not " + not_what + " (give a node's /metrics text or its " +
                  "series as JSON, schema fabscope.metrics)");
    in.label = node;
    return in;
  }
  Input in;
  in.file = file;
  in.label = node;
  in.schema = "prometheus-text";
  in.schema_version = 0;
  in.kind = kind;
  return in;
}

std::pair<std::string, std::string> named_file(const std::string& flag, const std::string& arg) {
  // "NAME=FILE" names the node; a FILE whose name holds '=' is given with a '/' before it.
  std::string node, path = arg;
  auto eq = arg.find('=');
  if (eq != std::string::npos && eq > 0 && arg.substr(0, eq).find('/') == std::string::npos) {
    node = arg.substr(0, eq);
    path = arg.substr(eq + 1);
    if (path.empty()) throw UsageError("report: " + flag + " " + core::printable(arg) + ": no file after '='");
  }
  if (node.empty()) node = label_for(path);
  return {node, path};
}


Input nccl_tests_json_input(const std::string& file, const json& doc) {
  Input in;
  in.file = file;
  in.label = label_for(file);
  in.schema = "nccl-tests JSON";
  in.schema_version = static_cast<int>(core::Fields(file, doc).opt_int("version").value_or(0));
  in.kind = InputKind::Bench;
  in.bench = nccl_tests_run_from_json(file, doc);
  return in;
}

Input input_from_json(const std::string& file, const json& doc, std::optional<InputKind> metrics_as) {
  if (!doc.is_object())
    throw Error(file + ": not a fabscope JSON output (the document is " + core::describe(doc) +
                ", not an object)");
  core::Fields top(file, doc);
  if (!top.has("schema")) {
    // nccl-tests' own JSON file (-J) has no schema key: told by its shape.
    if (is_nccl_tests_json(doc)) return nccl_tests_json_input(file, doc);
    throw Error(file + ": not a fabscope JSON output (no \"schema\" key) nor nccl-tests' -J file (no \"results\" "
                       "array beside a \"config\" object); report reads " +
                known_list() + " and nccl-tests' -J JSON");
  }
  Input in;
  in.file = file;
  in.label = label_for(file);
  in.schema = top.str("schema");
  const KnownSchema* known = nullptr;
  for (const auto& k : known_schemas())
    if (in.schema == k.name) known = &k;
  if (!known) {
    if (in.schema == "fabscope.node")
      throw Error(file + ": schema fabscope.node (probe output) is not a report input; give the "
                         "output of `fabscope check --json` or `fabscope doctor --json`");
    throw Error(file + ": schema '" + in.schema + "' is not one report reads (" + known_list() + ")");
  }
  std::int64_t version = top.integer("schema_version");
  if (version > known->version)
    throw Error(file + ": " + in.schema + " schema_version " + std::to_string(version) +
                " is newer than this fabscope reads (" + std::to_string(known->version) +
                "); use a newer fabscope report");
  if (version < 1) top.fail("schema_version", "expected 1 or more, got " + std::to_string(version));
  in.schema_version = static_cast<int>(version);
  in.kind = known->kind;
  switch (known->kind) {
    case InputKind::Node: in.node = node_from_json(file, doc, in.schema == "fabscope.doctor"); break;
    case InputKind::Bench: in.bench = bench_from_json(file, doc); break;
    case InputKind::Tune: in.tune = tune::saved_result_from_json(file, doc); break;
    case InputKind::Cluster: in.cluster = cluster_from_json(file, doc); break;
    case InputKind::Rdma: in.rdma = rdma_from_json(file, doc); break;
    case InputKind::Fabric: in.fabric = fabric_from_json(file, doc); break;
    case InputKind::Mesh:
    case InputKind::Job: {
      // fabscope.metrics: a node's series, read as its mesh snapshot or its running jobs. Given
      // among the JSON files: the mesh where it has mesh series, else the jobs where it has those.
      InputKind as = metrics_as.value_or(InputKind::Mesh);
      if (!metrics_as) {
        const bool mesh = metrics_json_has(doc, "fabscope_mesh_"), job = metrics_json_has(doc, "fabscope_job_");
        if (!mesh && !job)
          throw Error(file + ": no fabscope_mesh_* or fabscope_job_* series: fabscope.metrics is read for the probe "
                             "mesh (`exporter --mesh`) or the running jobs (`exporter --jobs`)");
        as = mesh ? InputKind::Mesh : InputKind::Job;
      }
      in.kind = as;
      if (as == InputKind::Job) in.job = job_from_json(file, in.label, doc);
      else in.mesh = mesh_from_json(file, in.label, doc);
      break;
    }
  }
  return in;
}

Input input_from_json_text(const std::string& file, std::string_view text, std::optional<InputKind> metrics_as) {
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i == text.size()) throw Error(file + ": empty file (no JSON document)");
  json doc;
  try {
    doc = parse_input_json(text);
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line 3, column 1: ..."
    auto p = what.find("parse error");
    if (p != std::string::npos) what = what.substr(p);
    bool truncated = e.byte >= text.size();
    throw Error(file + ": not valid JSON" + std::string(truncated ? " (truncated?)" : "") + ": " + what);
  } catch (const json::out_of_range& e) {
    // A number beyond a double ("1e400"): nlohmann throws out_of_range.406, not parse_error.
    std::string what = e.what();
    auto p = what.find("number overflow");
    throw Error(file + ": not valid JSON: " + (p == std::string::npos ? what : what.substr(p)));
  } catch (const Error& e) {
    throw Error(file + ": " + e.what());  // a key twice in one object
  }
  return input_from_json(file, doc, metrics_as);
}

std::vector<Input> inputs_from_json_text(const std::string& file, std::string_view text) {
  auto blank = [](std::string_view l) {
    return std::all_of(l.begin(), l.end(), [](unsigned char c) { return std::isspace(c) != 0; });
  };
  std::vector<std::pair<std::size_t, std::string_view>> lines;  // 1-based line number, text
  for (std::size_t pos = 0, no = 1; pos < text.size(); ++no) {
    std::size_t end = std::min(text.find('\n', pos), text.size());
    if (!blank(text.substr(pos, end - pos))) lines.emplace_back(no, text.substr(pos, end - pos));
    pos = end + 1;
  }
  if (lines.size() > 1) {
    json first = json::parse(lines[0].second.begin(), lines[0].second.end(), nullptr, false);
    if (!first.is_discarded() && first.is_object() && first.value("schema", json()) == "fabscope.rdma") {
      std::vector<Input> out;
      for (std::size_t k = 0; k < lines.size(); ++k) {
        Input in = input_from_json_text(file + ":" + std::to_string(lines[k].first), lines[k].second);
        if (in.kind != InputKind::Rdma)
          throw Error(file + ":" + std::to_string(lines[k].first) + ": schema " + in.schema +
                      " in a JSON Lines file of fabscope.rdma sessions");
        in.file = file;
        in.label = label_for(file) + " #" + std::to_string(k + 1);
        out.push_back(std::move(in));
      }
      return out;
    }
  }
  std::vector<Input> out;
  out.push_back(input_from_json_text(file, text));
  return out;
}

std::vector<Input> inputs_from_nccl_tests_text(const std::string& file, std::string_view text) {
  // --nccl-tests takes its -J JSON file as well as its text: a file whose first character is '{'.
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') {
    Input in = input_from_json_text(file, text);
    if (in.kind != InputKind::Bench)
      throw Error(file + ": --nccl-tests: a " + in.schema + " document, not an nccl-tests output (give it without --nccl-tests)");
    std::vector<Input> out;
    out.push_back(std::move(in));
    return out;
  }
  auto runs = parse_nccl_tests(file, text);
  std::vector<Input> out;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    Input in;
    in.file = file;
    in.label = label_for(file);
    if (runs.size() > 1) in.label += " #" + std::to_string(i + 1);
    in.schema = "nccl-tests";
    in.schema_version = 0;
    in.kind = InputKind::Bench;
    in.bench = std::move(runs[i]);
    out.push_back(std::move(in));
  }
  return out;
}

std::vector<Input> load_json_file(const std::string& path) {
  return inputs_from_json_text(path, core::read_input(path, kMaxInputBytes));
}

std::vector<Input> load_nccl_tests_file(const std::string& path) {
  return inputs_from_nccl_tests_text(path, core::read_input(path, kMaxInputBytes));
}

}  // namespace fabscope::report
