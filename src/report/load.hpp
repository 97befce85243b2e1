#pragma once
// Reading the inputs of `fabscope report`: JSON outputs of fabscope commands (recognised by
// their "schema" and "schema_version" keys) and nccl-tests text outputs. A file that cannot
// be used (unreadable, empty, truncated, another schema, a newer schema version, a field of the
// wrong type) throws fabscope::Error with a message that starts with the file name.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/fields.hpp"
#include "core/json.hpp"
#include "report/model.hpp"

namespace fabscope::report {

// The schemas report reads and the newest version of each it understands.
struct KnownSchema {
  const char* name;
  int version;
  InputKind kind;
};
const std::vector<KnownSchema>& known_schemas();

// Inputs are read with core::read_input, at most this many bytes each.
constexpr std::size_t kMaxInputBytes = 512u << 20;

// From text already read: `file` is only used in messages and labels. A fabscope.metrics document
// (a node's series) is read as `metrics_as` (InputKind::Mesh or InputKind::Job); without it, as
// its mesh snapshot where it has fabscope_mesh_* series, else as its running jobs.
Input input_from_json_text(const std::string& file, std::string_view text,
                           std::optional<InputKind> metrics_as = std::nullopt);
Input input_from_json(const std::string& file, const json& doc, std::optional<InputKind> metrics_as = std::nullopt);
// As input_from_json_text, and JSON Lines of fabscope.rdma (`fabscope rdma --server --sessions N
// --json` writes one compact object per session and line): one Input per line, labelled
// "name #1", "name #2"; an error names "FILE:LINE".
std::vector<Input> inputs_from_json_text(const std::string& file, std::string_view text);
// nccl-tests' -J JSON file (recognised by input_from_json by its shape, it has no "schema"): one run,
// schema "nccl-tests JSON", schema_version its "version".
Input nccl_tests_json_input(const std::string& file, const json& doc);
// nccl-tests output: every table in the text is one run (one Input each); a text starting with '{'
// is read as JSON (its -J file).
std::vector<Input> inputs_from_nccl_tests_text(const std::string& file, std::string_view text);

// One node's probe mesh snapshot (mesh_input.cpp): its /metrics text (Prometheus exposition) or
// the same series in the `exporter --once --json` layout (fabscope.metrics, recognised by a
// leading '{'). `node` is the prober's name in the mesh section.
Input input_from_mesh_text(const std::string& file, const std::string& node, std::string_view text);
MeshDoc mesh_from_exposition(const std::string& file, const std::string& node, std::string_view text);
MeshDoc mesh_from_json(const std::string& file, const std::string& node, const json& doc);

// One node's running jobs (job_input.cpp): its /metrics text served by `exporter --jobs`, or the
// same series in the fabscope.metrics layout (recognised by a leading '{'). Only fabscope_job_*
// series are read; `node` names the file's node in the section.
Input input_from_job_text(const std::string& file, const std::string& node, std::string_view text);
JobDoc job_from_exposition(const std::string& file, const std::string& node, std::string_view text);
JobDoc job_from_json(const std::string& file, const std::string& node, const json& doc);

// Reading the files.
std::vector<Input> load_json_file(const std::string& path);
std::vector<Input> load_nccl_tests_file(const std::string& path);
// "[NAME=]FILE" (--mesh): NAME is the node, else the file's label ("node07.prom" -> "node07");
// a FILE holding '=' is given with a '/' before the '=' ("./a=b.prom").
std::vector<Input> load_mesh_file(const std::string& arg);
// "[NAME=]FILE" (--job): as --mesh.
std::vector<Input> load_job_file(const std::string& arg);
// "[NAME=]FILE" split: NAME, else the file's label, and the file; `flag` names the option in the
// usage error of "NAME=" without a file.
std::pair<std::string, std::string> named_file(const std::string& flag, const std::string& arg);

// The frame of a node's metrics file read as `kind` (InputKind::Mesh or InputKind::Job), shared by
// input_from_mesh_text and input_from_job_text: a text whose first non-blank byte is '{' is a
// fabscope.metrics document, refused unless it holds that kind ("FILE: schema S is not
// `not_what` ..."); any other text is Prometheus exposition, returned as an Input of schema
// "prometheus-text" whose document the caller fills. Either way labelled `node`.
Input metrics_input(const std::string& file, const std::string& node, std::string_view text, InputKind kind,
                    const std::string& not_what);

// "runs/default.json" -> "default".
std::string label_for(const std::string& path);

// Filled by node_input.cpp, bench_input.cpp, cluster_input.cpp, rdma_input.cpp,
// fabric_input.cpp; a tune result by tune::saved_result_from_json.
NodeDoc node_from_json(const std::string& file, const json& doc, bool doctor);
BenchRun bench_from_json(const std::string& file, const json& doc);
cluster::SavedResult cluster_from_json(const std::string& file, const json& doc);
rdma::Result rdma_from_json(const std::string& file, const json& doc);
FabricDoc fabric_from_json(const std::string& file, const json& doc);  // fabric_input.cpp

}  // namespace fabscope::report
