#pragma once
// `fabscope capture`: what the probe, the checks and the exporter read on this node, packed as a
// tree that `--root` takes (sys/, proc/ under one top directory), with the outputs of the tools
// the probe ran, `fabscope probe --json`, and a manifest (schema fabscope.capture,
// docs/formats.md). The set of files is not a list kept here: the readers run over a Root that
// records every path asked about (core::AccessLog), so a new collector is captured as it is
// written.
#include <cstdint>
#include <string>

#include "core/json.hpp"
#include "core/root.hpp"
#include "capture/tree.hpp"

namespace fabscope::capture {

struct Options {
  bool redact = false;
  TreeLimits limits;
  int command_timeout_ms = 5000;
  std::string top_dir = "fabscope-capture";  // the archive's one top-level directory
};

struct Result {
  std::string archive;  // .tar.gz bytes
  json manifest;        // as written into the archive
  json summary;         // schema fabscope.capture.summary: what --json prints
};

// Runs the readers on root and packs what they read. Throws fabscope::Error when zlib cannot be
// loaded (no archive can be written).
Result run(const core::Root& root, const Options& opts);

// The archive's top directory for an output file name: "node.tar.gz" -> "node"; characters other
// than letters, digits, '.', '_' and '-' become '_'; "fabscope-capture" when nothing is left.
std::string top_dir_for(const std::string& output_path);

}  // namespace fabscope::capture
