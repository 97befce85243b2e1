#include "tune/table.hpp"

#include <cmath>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "table.h"  // plugins/nccl-tuner

namespace fabscope::tune {

namespace {
std::uint64_t geometric_mid(std::uint64_t a, std::uint64_t b) {
  return static_cast<std::uint64_t>(std::floor(std::sqrt(static_cast<long double>(a) * static_cast<long double>(b))));
}

bench::Collective from_func(int f) {
  switch (f) {
    case 0: return bench::Collective::Broadcast;
    case 1: return bench::Collective::Reduce;
    case 2: return bench::Collective::AllGather;
    case 3: return bench::Collective::ReduceScatter;
    default: return bench::Collective::AllReduce;
  }
}
}  // namespace

std::vector<TableRow> table_rows(const TuneResult& r) {
  std::vector<TableRow> rows;
  for (const auto& co : r.collectives) {
    const auto& s = co.sizes;
    bool open = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const std::uint64_t lo = i == 0 ? s[i].bytes : geometric_mid(s[i - 1].bytes, s[i].bytes) + 1;
      const std::uint64_t hi = i + 1 == s.size() ? s[i].bytes : geometric_mid(s[i].bytes, s[i + 1].bytes);
      if (s[i].written.is_default()) {
        open = false;
        continue;
      }
      if (open && rows.back().choice == s[i].written) {
        rows.back().max_bytes = hi;
        continue;
      }
      rows.push_back({co.collective, lo, hi, s[i].written, r.nnodes, r.nranks});
      open = true;
    }
  }
  return rows;
}

std::string render_table(const std::vector<TableRow>& rows, const std::vector<std::string>& comments) {
  std::ostringstream o;
  for (const auto& c : comments) o << "# " << c << "\n";
  o << "# collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks\n";
  for (const auto& row : rows) {
    if (row.choice.algo < 0)
      throw Error("tune: a table row needs an algorithm and a protocol (NCCL's example plugin "
                  "cannot express a channel count alone)");
    o << table_name(row.collective) << ',' << row.min_bytes << ',' << row.max_bytes << ','
      << algo_name(row.choice.algo) << ',' << proto_name(row.choice.proto) << ','
      << row.choice.channels << ',' << row.nnodes << ',' << row.nranks << "\n";
  }
  return o.str();
}

std::vector<TableRow> parse_table(const std::string& text, const std::string& source) {
  struct Bad {
    std::size_t line = 0;
    std::string why;
  } bad;
  fst_table t;
  int rc = fst_parse_text(text.data(), text.size(), &t,
                          [](void* arg, std::size_t line, const char* why) {
                            auto* b = static_cast<Bad*>(arg);
                            if (b->line == 0) {
                              b->line = line;
                              b->why = why;
                            }
                          },
                          &bad);
  std::vector<TableRow> rows;
  for (std::size_t i = 0; i < t.count; ++i) {
    const fst_row& x = t.rows[i];
    rows.push_back({from_func(x.coll), x.min_bytes, x.max_bytes, Choice{x.algo, x.proto, x.channels},
                    x.nnodes, x.nranks});
  }
  fst_table_free(&t);
  if (rc != 0) throw Error(source + ": out of memory reading the tuner table");
  if (bad.line != 0) throw Error(source + ":" + std::to_string(bad.line) + ": " + bad.why);
  return rows;
}

std::vector<TableRow> read_table_file(const std::string& path) {
  return parse_table(core::read_input(path, 16u << 20), path);
}

Choice table_choice(const std::vector<TableRow>& rows, bench::Collective c, std::uint64_t bytes, int nnodes,
                    int nranks) {
  for (const auto& r : rows) {
    if (r.collective != c || bytes < r.min_bytes || bytes > r.max_bytes) continue;
    if (r.nnodes != -1 && r.nnodes != nnodes) continue;
    if (r.nranks != -1 && r.nranks != nranks) continue;
    return r.choice;
  }
  return kNcclDefault;
}

}  // namespace fabscope::tune
