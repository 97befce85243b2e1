#pragma once
// What `fabscope tune` prints and writes besides the table: the report (text and JSON, schema
// "fabscope.tune" version 1, docs/formats.md; read back by saved_result.hpp), every measurement
// in the input CSV of NCCL's optimize_config.py (ext-tuner/example/scripts), the environment that
// loads the table (an ncclenv::EnvPlan, rendered in any `fabscope env` format) and the
// bucket-size advice.
#include <string>
#include <vector>

#include "core/json.hpp"
#include "ncclenv/plan.hpp"
#include "tune/advice.hpp"
#include "tune/table.hpp"
#include "tune/tune.hpp"

namespace fabscope::tune {

// Advice for each tuned collective that has one (all-reduce: DDP; all-gather, reduce-scatter:
// FSDP), from the bus bandwidth of what was written per size.
std::vector<BucketAdvice> advise(const TuneResult& r);

// Text report, lines within width columns.
std::string render_report(const TuneResult& r, const std::vector<TableRow>& rows,
                          const std::vector<BucketAdvice>& advice, std::size_t width = 100);

json report_json(const TuneResult& r, const std::vector<TableRow>& rows,
                 const std::vector<BucketAdvice>& advice);

// collective,size_bytes,algorithm,protocol,channels,nodes,ranks,pipeOps,regBuff,bandwidth_gbps,
// latency_us: one line per measurement of an explicit choice (NCCL's default cannot be named in
// that layout), bandwidth = bus bandwidth in GB/s, latency = time of one call in microseconds.
std::string optimize_config_csv(const TuneResult& r);

// NCCL_TUNER_PLUGIN and NCCL_TUNER_CONFIG_FILE, each with its reason.
ncclenv::EnvPlan tuned_env(const TuneResult& r, const std::vector<TableRow>& rows,
                           const std::string& plugin_path, const std::string& table_path);

}  // namespace fabscope::tune
