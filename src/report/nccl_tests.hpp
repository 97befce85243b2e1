#pragma once
// nccl-tests' text output (all_reduce_perf and friends) -> BenchRun, so a report can overlay
// an nccl-tests sweep on fabscope bench runs.
//
// The table is read by its header line, not by fixed positions: nccl-tests added the `root`
// column (2.10) and renamed `error` (largest deviation, "4e-07") to `#wrong` (a count), and
// alltoall/sendrecv print N/A where in-place is not defined. Lines may carry a launcher prefix
// (Open MPI --tag-output "[1,0]<stdout>:", srun --label "0: "); lines of other programs between
// the rows (MPI help messages, NCCL INFO) are skipped. One file may hold several tables (one
// per collective run): each is one run.
#include <string>
#include <string_view>
#include <vector>

#include "core/json.hpp"
#include "report/model.hpp"

namespace fabscope::report {

// Throws fabscope::Error naming the file (and the line) when no table is found, a table has no
// rows, or a row is cut short or holds a value that is not a number.
std::vector<BenchRun> parse_nccl_tests(const std::string& file, std::string_view text);

// nccl-tests' JSON file (`-J FILE`, nccl-tests 2.19+; `fabscope bench -J` writes the same layout):
// an object without a "schema" key holding "results" (an array) and "config" (an object). One run.
bool is_nccl_tests_json(const json& doc);
// Throws fabscope::Error naming the file and the field ("results[2].out_of_place.bus_bw") when a
// value is missing or of the wrong type, or when there is no result.
BenchRun nccl_tests_run_from_json(const std::string& file, const json& doc);

// "[1,0]<stdout>:   8  2 float" -> "   8  2 float"; "3: # size" -> "# size". Else unchanged.
std::string_view strip_launcher_prefix(std::string_view line);

}  // namespace fabscope::report
