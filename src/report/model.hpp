#pragma once
// What `fabscope report` reads, as plain values: one Input per file given, whatever wrote it.
// Loading (load.hpp) fills these from JSON or nccl-tests text; rendering (render.hpp) turns
// them into HTML and never reads a file.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/finding.hpp"

namespace fabscope::report {

// `fabscope check --json` or `fabscope doctor --json`: one node's findings.
struct NodeDoc {
  std::string hostname;
  std::string verdict;    // doctor: "healthy" | "degraded" | "broken"; check: "" (see worst)
  std::string transport;  // doctor only
  std::optional<int> gpus, rdma_devices;  // doctor only
  std::vector<Finding> findings;
  std::vector<std::string> next_steps;    // doctor only
  std::vector<std::string> probe_notes;
  int fail = 0, warn = 0, info = 0;
  std::string worst;      // "ok" | "info" | "warn" | "fail"
};

// One placement of one size, as nccl-tests prints it.
struct Placement {
  double time_us = 0;
  double algbw_gbytes_per_s = 0;
  double busbw_gbytes_per_s = 0;
  std::optional<std::int64_t> wrong;  // null: not checked (N/A), or an old "error" column
};

struct BenchRow {
  int cycle = 0;  // bench -N: which repetition of the sweep (0-based)
  std::uint64_t size_bytes = 0;
  std::uint64_t count = 0;
  Placement out_of_place;
  std::optional<Placement> in_place;  // null where in-place is not defined (alltoall, sendrecv)
};

// One benchmark sweep: a `fabscope bench --json` file or one table of an nccl-tests output.
struct BenchRun {
  std::string source;       // "fabscope bench" | "nccl-tests"
  std::string collective;   // "all_reduce" (nccl-tests: from "alltoall_perf" etc. when printed)
  std::string datatype, op;
  std::optional<int> nranks;
  std::optional<int> nodes;
  std::string hosts;        // "h200x2", or "ztan-mig-235z, ztan-mig-gq73"
  std::string gpu_name;     // first device's name
  std::string nccl_version, cuda_driver, nvidia_driver, tool_version;
  std::string date_utc;
  std::vector<BenchRow> rows;
  // fabscope bench only: the path's theoretical busbw limit and its verdict.
  std::optional<double> limit_gbytes_per_s;
  std::string limit_path, limit_description;
  std::string verdict_level, verdict;
  std::optional<std::int64_t> wrong_total;
  double avg_busbw_gbytes_per_s = 0;  // as the tool printed it (nccl-tests: its summary line)
};

// `fabscope tune --json` / tune.json: per collective and size, NCCL's default against the
// choice written to the tuner table, with the verified speedup.
struct TuneSize {
  std::uint64_t bytes = 0;
  std::optional<double> default_busbw_gbytes_per_s, written_busbw_gbytes_per_s;
  std::string written;  // choice label: "ring/simple/24ch" or "NCCL default"
  bool verified = false, kept_tuned = false;
  std::optional<double> speedup;                     // default time / tuned time
  std::optional<std::pair<double, double>> speedup_ci95;
  std::string reason;
};

struct TuneCollective {
  std::string collective;
  std::size_t candidates = 0;  // besides NCCL's default
  std::vector<TuneSize> sizes;
};

struct TuneRow {  // one row of the tuner table written
  std::string collective, choice;
  std::uint64_t min_bytes = 0, max_bytes = 0;
};

struct TuneDoc {
  bool simulated = false;
  std::string source;
  std::optional<int> nranks, nnodes;
  std::vector<TuneCollective> collectives;
  std::vector<TuneRow> table;
  std::vector<std::string> advice;
};

enum class InputKind { Node, Bench, Tune };

struct Input {
  std::string file;     // as given on the command line
  std::string label;    // short name in legends: the file name without directory and extension
  std::string schema;   // "fabscope.check", "fabscope.doctor", "fabscope.bench", "nccl-tests"
  int schema_version = 0;
  InputKind kind = InputKind::Node;
  NodeDoc node;         // kind == Node
  BenchRun bench;       // kind == Bench
  TuneDoc tune;         // kind == Tune
};

struct Report {
  std::string title = "fabscope report";
  std::string generated_utc;  // "2026-11-23T15:00:00Z"; "" leaves it out
  std::string docs_url;       // base prepended to "docs/checks.md#..." links; "" keeps them relative
  std::vector<Input> inputs;
};

}  // namespace fabscope::report
