#include "report/nccl_tests.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

#include "core/error.hpp"
#include "core/root.hpp"
#include "core/strings.hpp"
#include "core/fields.hpp"

namespace fabscope::report {

namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::string_view ltrim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  return s;
}

// Header columns by position: size, count, type, redop?, root?, then two groups of
// time, algbw, busbw, #wrong|error.
struct Header {
  std::size_t fields = 0;
  int size = -1, count = -1, type = -1, redop = -1, root = -1;
  int time[2] = {-1, -1}, algbw[2] = {-1, -1}, busbw[2] = {-1, -1}, wrong[2] = {-1, -1};
  bool wrong_is_count = true;  // "#wrong" (count) vs old "error" (largest deviation)
};

std::optional<Header> parse_header(std::string_view body) {
  auto tok = core::split_ws(body);
  if (tok.size() < 6 || tok[0] != "size" || tok[1] != "count" || tok[2] != "type") return std::nullopt;
  Header h;
  h.fields = tok.size();
  int group = -1;
  for (std::size_t i = 0; i < tok.size(); ++i) {
    const auto& t = tok[i];
    int idx = static_cast<int>(i);
    if (t == "size" && h.size < 0) h.size = idx;
    else if (t == "count" && h.count < 0) h.count = idx;
    else if (t == "type" && h.type < 0) h.type = idx;
    else if (t == "redop") h.redop = idx;
    else if (t == "root") h.root = idx;
    else if (t == "time") {
      if (++group > 1) return std::nullopt;
      h.time[group] = idx;
    } else if (group >= 0 && t == "algbw") h.algbw[group] = idx;
    else if (group >= 0 && t == "busbw") h.busbw[group] = idx;
    else if (group >= 0 && (t == "#wrong" || t == "error")) {
      h.wrong[group] = idx;
      if (t == "error") h.wrong_is_count = false;
    }
  }
  if (h.time[0] < 0 || h.busbw[0] < 0 || h.algbw[0] < 0) return std::nullopt;
  // An in-place group is whole or absent: its time without algbw and busbw is no table we read.
  if (h.time[1] >= 0 && (h.busbw[1] < 0 || h.algbw[1] < 0)) return std::nullopt;
  return h;
}

constexpr std::int64_t kMaxRank = 1 << 24;

struct Meta {
  std::string collective, tool_version, nccl_version;
  std::vector<std::string> hosts;
  std::string gpu_name;
  int max_rank = -1;
};

// "#  Rank  0 Group  0 Pid   6899 on ztan-mig-235z device  0 [0000:04:00] NVIDIA H100 80GB HBM3"
// (older: no "Group"). Host is the word after "on", the GPU name what follows "[...]".
void read_rank_line(std::string_view body, Meta& m) {
  auto tok = core::split_ws(body);
  if (tok.size() < 2 || tok[0] != "Rank" || !all_digits(tok[1])) return;
  // A rank number beyond any job (or beyond int) is not a rank line.
  auto rank = core::parse_int(tok[1]);
  if (!rank || *rank > kMaxRank) return;
  m.max_rank = std::max(m.max_rank, static_cast<int>(*rank));
  for (std::size_t i = 2; i + 1 < tok.size(); ++i) {
    if (tok[i] != "on") continue;
    const std::string& host = tok[i + 1];
    if (std::find(m.hosts.begin(), m.hosts.end(), host) == m.hosts.end()) m.hosts.push_back(host);
    break;
  }
  auto close = body.find(']');
  if (m.gpu_name.empty() && close != std::string_view::npos)
    m.gpu_name = std::string(core::trim(body.substr(close + 1)));
}

// "./build/all_reduce_perf -b 8" or "# Collective test starting: alltoall_perf" -> "all_reduce".
std::string collective_in(std::string_view line) {
  auto p = line.find("_perf");
  if (p == std::string_view::npos) return "";
  std::size_t b = p;
  while (b > 0 && (std::islower(static_cast<unsigned char>(line[b - 1])) || line[b - 1] == '_' ||
                   std::isdigit(static_cast<unsigned char>(line[b - 1]))))
    --b;
  if (b == p) return "";
  return std::string(line.substr(b, p - b));
}

double number(const std::string& file, std::size_t lineno, const std::string& column, const std::string& v) {
  auto d = core::parse_double(v);
  if (!d || *d < 0)
    throw Error(file + ": line " + std::to_string(lineno) + ": column '" + column + "': '" + v +
                "' is not a non-negative number");
  return *d;
}

std::optional<Placement> placement(const std::string& file, std::size_t lineno, const Header& h, int g,
                                   const std::vector<std::string>& tok) {
  if (h.time[g] < 0) return std::nullopt;
  const std::string& t = tok[h.time[g]];
  if (t == "N/A") return std::nullopt;  // in-place not defined (alltoall, sendrecv)
  Placement p;
  p.time_us = number(file, lineno, "time", t);
  p.algbw_gbytes_per_s = number(file, lineno, "algbw", tok[h.algbw[g]]);
  p.busbw_gbytes_per_s = number(file, lineno, "busbw", tok[h.busbw[g]]);
  if (h.wrong[g] >= 0 && h.wrong_is_count && tok[h.wrong[g]] != "N/A") {
    auto w = core::parse_int(tok[h.wrong[g]]);
    if (!w || *w < 0)
      throw Error(file + ": line " + std::to_string(lineno) + ": column '#wrong': '" + tok[h.wrong[g]] +
                  "' is not a count");
    p.wrong = *w;
  }
  return p;
}

// nccl-tests' -J placement: {"time" (or "cpu_time" with -C 1), "alg_bw", "bus_bw", "nwrong"}, µs
// and GB/s as in its text; nwrong a double (a count) or null where not checked.
Placement json_placement(const core::Fields& p) {
  Placement x;
  x.time_us = p.has("time") || !p.has("cpu_time") ? p.num("time") : p.num("cpu_time");
  x.algbw_gbytes_per_s = p.num("alg_bw");
  x.busbw_gbytes_per_s = p.num("bus_bw");
  if (x.time_us < 0) p.fail(p.has("time") ? "time" : "cpu_time", "negative");
  if (x.algbw_gbytes_per_s < 0) p.fail("alg_bw", "negative");
  if (x.busbw_gbytes_per_s < 0) p.fail("bus_bw", "negative");
  if (auto w = p.opt_num("nwrong")) {
    if (*w < 0 || *w > 9e15 || *w != std::floor(*w)) p.fail("nwrong", "expected a count, got " + std::to_string(*w));
    x.wrong = static_cast<std::int64_t>(*w);
  }
  return x;
}

// NCCL_VERSION_CODE: X*10000 + Y*100 + Z since 2.9, X*1000 + Y*100 + Z before.
std::string nccl_version_text(std::int64_t code) {
  if (code <= 0) return "";
  if (code >= 10000)
    return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
  return std::to_string(code / 1000) + "." + std::to_string(code / 100 % 10) + "." + std::to_string(code % 100);
}

}  // namespace

bool is_nccl_tests_json(const json& doc) {
  return doc.is_object() && !doc.contains("schema") && doc.contains("results") && doc["results"].is_array() &&
         doc.contains("config") && doc["config"].is_object();
}

BenchRun nccl_tests_run_from_json(const std::string& file, const json& doc) {
  core::Fields top(file, doc);
  BenchRun r;
  r.source = "nccl-tests";
  if (auto v = top.opt_int("version"); v && *v < 1) top.fail("version", "expected 1 or more, got " + std::to_string(*v));
  // The collective is only in the command line: "all_reduce_perf" (or a path to it).
  for (const auto& a : top.strings("args")) {
    if (auto c = collective_in(a); !c.empty()) {
      r.collective = c;
      break;
    }
  }
  if (r.collective.empty()) r.collective = "unknown";
  if (auto code = top.opt_int("nccl_version")) r.nccl_version = nccl_version_text(*code);
  if (auto t = top.str_or("start_time", ""); !t.empty()) r.date_utc = core::printable(t.substr(0, 40)) + " (local time)";
  core::Fields config = top.object("config");
  std::vector<std::string> hosts;
  int devices = 0;
  if (config.has("devices")) {
    for (const auto& d : config.array("devices")) {
      ++devices;
      std::string h = d.str_or("hostname", "");
      if (!h.empty() && std::find(hosts.begin(), hosts.end(), h) == hosts.end()) hosts.push_back(h);
      if (r.gpu_name.empty()) r.gpu_name = d.str_or("device_info", "");
    }
  }
  if (devices > 0) r.nranks = devices;  // one entry per rank (each GPU of each process)
  if (!hosts.empty()) r.nodes = static_cast<int>(hosts.size());
  for (const auto& h : hosts) r.hosts += (r.hosts.empty() ? "" : ", ") + h;
  const auto results = top.array("results");
  if (results.empty()) top.fail("results", "empty: nccl-tests wrote no size");
  for (const auto& row : results) {
    BenchRow b;
    b.size_bytes = row.uint("size");
    b.count = row.uint("count");
    b.out_of_place = json_placement(row.object("out_of_place"));
    if (auto ip = row.optional_object("in_place")) b.in_place = json_placement(*ip);
    if (r.rows.empty()) {
      r.datatype = row.str_or("type", "");
      r.op = row.str_or("redop", "");
    }
    r.rows.push_back(b);
  }
  if (auto oob = top.optional_object("out_of_bounds"))
    if (auto n = oob->opt_int("count")) r.wrong_total = *n;
  if (auto avg = top.optional_object("average_bus_bandwidth"))
    r.avg_busbw_gbytes_per_s = avg->opt_num("bandwidth").value_or(0);
  return r;
}

std::string_view strip_launcher_prefix(std::string_view line) {
  // Open MPI --tag-output: "[jobid,rank]<stdout>:" / "<stderr>:"
  if (!line.empty() && line[0] == '[') {
    auto close = line.find("]<std");
    if (close != std::string_view::npos) {
      auto colon = line.find(">:", close);
      if (colon != std::string_view::npos) return line.substr(colon + 2);
    }
  }
  // srun --label: "12: "
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  std::size_t d = i;
  while (d < line.size() && std::isdigit(static_cast<unsigned char>(line[d]))) ++d;
  if (d > i && d + 1 < line.size() && line[d] == ':' && line[d + 1] == ' ') return line.substr(d + 2);
  return line;
}

std::vector<BenchRun> parse_nccl_tests(const std::string& file, std::string_view text) {
  std::vector<BenchRun> runs;
  Meta meta;
  std::optional<Header> header;
  std::size_t header_line = 0;
  BenchRun cur;
  bool seen_header = false;

  auto finish = [&]() {
    if (!header) return;
    if (cur.rows.empty())
      throw Error(file + ": the nccl-tests table at line " + std::to_string(header_line) + " has no rows");
    runs.push_back(std::move(cur));
    cur = BenchRun{};
    header.reset();
  };

  std::size_t lineno = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    auto nl = text.find('\n', pos);
    std::string_view raw = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++lineno;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    std::string_view line = ltrim(strip_launcher_prefix(raw));
    if (line.empty()) continue;

    if (line[0] == '#') {
      std::string_view body = ltrim(line.substr(1));
      if (auto h = parse_header(body)) {
        finish();
        header = h;
        header_line = lineno;
        seen_header = true;
        cur.source = "nccl-tests";
        cur.collective = meta.collective;
        cur.tool_version = meta.tool_version;
        cur.nccl_version = meta.nccl_version;
        cur.gpu_name = meta.gpu_name;
        if (meta.max_rank >= 0) cur.nranks = meta.max_rank + 1;
        if (!meta.hosts.empty()) cur.nodes = static_cast<int>(meta.hosts.size());
        for (const auto& host : meta.hosts) cur.hosts += (cur.hosts.empty() ? "" : ", ") + host;
        continue;
      }
      if (core::starts_with(body, "nccl-tests version")) {
        auto tok = core::split_ws(body);
        meta = Meta{};
        if (tok.size() >= 3) meta.tool_version = tok[2];
      } else if (core::starts_with(body, "Collective test starting:")) {
        meta.collective = collective_in(body);
      } else if (core::starts_with(body, "nThread")) {
        // A new run's settings line: forget the devices of the previous one.
        meta.hosts.clear();
        meta.gpu_name.clear();
        meta.max_rank = -1;
      } else if (core::starts_with(body, "Rank")) {
        read_rank_line(body, meta);
      } else if (header && core::starts_with(body, "Avg bus bandwidth")) {
        auto colon = body.find(':');
        if (colon != std::string_view::npos)
          if (auto v = core::parse_double(core::trim(body.substr(colon + 1)))) cur.avg_busbw_gbytes_per_s = *v;
        finish();
      } else if (header && core::starts_with(body, "Out of bounds values")) {
        auto tok = core::split_ws(body);
        for (const auto& t : tok)
          if (auto v = core::parse_int(t)) cur.wrong_total = *v;
      }
      continue;
    }
    if (core::starts_with(line, "NCCL version ")) {
      auto tok = core::split_ws(line);
      std::string v = tok.size() >= 3 ? tok[2] : "";
      if (auto plus = v.find('+'); plus != std::string::npos) v.resize(plus);
      meta.nccl_version = v;
      if (header) cur.nccl_version = v;
      continue;
    }
    if (!header) {
      if (auto c = collective_in(line); !c.empty()) meta.collective = c;
      continue;
    }
    auto tok = core::split_ws(line);
    if (tok.empty() || !all_digits(tok[0]) || tok.size() < 3 || !all_digits(tok[1])) continue;  // other output
    if (tok.size() != header->fields)
      throw Error(file + ": line " + std::to_string(lineno) + ": " + std::to_string(tok.size()) +
                  " fields where the header at line " + std::to_string(header_line) + " has " +
                  std::to_string(header->fields) + " (truncated?)");
    BenchRow row;
    auto size = core::parse_u64(tok[header->size]);
    auto count = core::parse_u64(tok[header->count]);
    if (!size || !count)
      throw Error(file + ": line " + std::to_string(lineno) + ": size '" + tok[header->size] + "' or count '" +
                  tok[header->count] + "' is not a byte count");
    row.size_bytes = *size;
    row.count = *count;
    auto oop = placement(file, lineno, *header, 0, tok);
    if (!oop)
      throw Error(file + ": line " + std::to_string(lineno) + ": out-of-place time is N/A");
    row.out_of_place = *oop;
    row.in_place = placement(file, lineno, *header, 1, tok);
    if (cur.rows.empty()) {
      cur.datatype = tok[header->type];
      if (header->redop >= 0) cur.op = tok[header->redop];
    }
    cur.rows.push_back(row);
  }
  if (header) finish();
  if (!seen_header)
    throw Error(file + ": no nccl-tests table (no '#  size  count  type ... time  algbw  busbw' header line)");
  for (auto& r : runs)
    if (r.collective.empty()) r.collective = "unknown";
  return runs;
}

}  // namespace fabscope::report
