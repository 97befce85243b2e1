#pragma once
// A saved `fabscope tune --json` result (fabscope.tune, docs/formats.md) read back as written:
// the run with every trial, the tuner table rows and the bucket advice. The one reader of that
// file: `tune --launch` reads the table job's tune.json through it, and `report` renders what
// it returns. report_json(r.run, r.table, r.advice) gives the document again.
#include <string>
#include <vector>

#include "core/fields.hpp"
#include "core/json.hpp"
#include "tune/advice.hpp"
#include "tune/env_search.hpp"
#include "tune/table.hpp"
#include "tune/tune.hpp"

namespace fabscope::tune {

struct SavedResult {
  TuneResult run;
  std::vector<TableRow> table;       // `table[]`: the rows written, in file order
  std::vector<BucketAdvice> advice;  // `advice[]`
};

// Reads a fabscope.tune document of any layout of version 1. Every key the first layout wrote is
// required; compute_load, env_search (with its table and combined) and sizes[].idle, added
// later, may be absent. Throws fabscope::Error "FILE: field 'collectives[0].sizes[2].rungs':
// missing" naming the field and what it held.
SavedResult saved_result_from_json(const std::string& file, const json& doc);

// The `env_search` member, at the place `f` points to (errors name the path from there).
EnvSearchResult env_search_from_fields(const core::Fields& f);

}  // namespace fabscope::tune
