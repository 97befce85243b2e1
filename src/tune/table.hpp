#pragma once
// The tuner table written by `fabscope tune`: one row per run of adjacent measured sizes that
// kept the same verified choice, in the CSV of NCCL's example tuner (docs/tune.md#table-format).
// Sizes where NCCL's default stayed get no row: the plugin leaves NCCL alone there. Reading goes
// through the plugin's own reader (plugins/nccl-tuner/table.c), so both agree on the format.
#include <cstdint>
#include <string>
#include <vector>

#include "bench/collectives.hpp"
#include "tune/space.hpp"
#include "tune/tune.hpp"

namespace fabscope::tune {

struct TableRow {
  bench::Collective collective = bench::Collective::AllReduce;
  std::uint64_t min_bytes = 0;  // inclusive
  std::uint64_t max_bytes = 0;  // inclusive
  Choice choice;
  int nnodes = -1;
  int nranks = -1;
  bool operator==(const TableRow&) const = default;
};

// Each measured size s_i covers the bytes from the geometric midpoint with its lower neighbour
// to that with its upper one; the first and last sizes end the range (nothing is claimed outside
// what was measured). Adjacent sizes with the same written choice merge into one row.
std::vector<TableRow> table_rows(const TuneResult& r);

// CSV text: '#' comment lines (what wrote it, the source, the rule), then the rows.
std::string render_table(const std::vector<TableRow>& rows, const std::vector<std::string>& comments);

// Parses a table; throws fabscope::Error naming source:line and the reason at the first bad line.
std::vector<TableRow> parse_table(const std::string& text, const std::string& source);
// The same from a file (at most 16 MiB); errors name the path.
std::vector<TableRow> read_table_file(const std::string& path);

// What the plugin applies to a call: the first row in file order whose collective, byte range,
// nNodes and nRanks (-1: any) match; NCCL's default when none does (fst_match's rule).
Choice table_choice(const std::vector<TableRow>& rows, bench::Collective c, std::uint64_t bytes, int nnodes,
                    int nranks);

}  // namespace fabscope::tune
