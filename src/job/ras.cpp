#include "job/ras.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>

#include "core/error.hpp"
#include "core/socket.hpp"
#include "core/strings.hpp"
#include "job/registry.hpp"

namespace fabscope::job {

namespace {

// Bounds on what a report may make us keep.
constexpr std::size_t kMaxText = 200;       // one string kept from the report
constexpr std::size_t kMaxLine = 4096;      // a longer line is cut before it is read
constexpr std::size_t kMaxList = 256;       // ranks or processes kept per list
constexpr std::size_t kMaxGroupRanks = 16;  // ranks kept per operation-count group (NCCL lists at most 10)
constexpr std::size_t kMaxComms = 4096;     // communicators kept
constexpr std::size_t kMaxKept = 2000;      // warning lines kept
constexpr std::size_t kMaxOther = 200;      // lines not understood kept
constexpr int kMaxRank = 1 << 24;
constexpr std::int64_t kMaxPid = (std::int64_t{1} << 31) - 1;

std::string cut(std::string_view s, std::size_t n = kMaxText) {
  std::string p = core::printable(s.substr(0, std::min(s.size(), n * 4)));
  if (p.size() > n) {
    p.resize(n);
    p += "...";
  }
  return p;
}

template <typename T>
void push_bounded(std::vector<T>& v, T x, std::size_t max = kMaxList) {
  if (v.size() < max) v.push_back(std::move(x));
}

std::optional<int> small_int(std::string_view s, std::int64_t lo, std::int64_t hi) {
  auto v = core::parse_int(s);
  if (!v || *v < lo || *v > hi) return std::nullopt;
  return static_cast<int>(*v);
}

// The leading decimal number of s (after blanks) and the rest; nullopt when s starts otherwise.
std::optional<std::uint64_t> leading_u64(std::string_view& s) {
  s = core::trim(s);
  std::size_t n = 0;
  while (n < s.size() && n < 20 && s[n] >= '0' && s[n] <= '9') n++;
  if (n == 0) return std::nullopt;
  auto v = core::parse_u64(s.substr(0, n));
  if (!v) return std::nullopt;
  s.remove_prefix(n);
  return v;
}

bool eat(std::string_view& s, std::string_view prefix) {
  if (!core::starts_with(s, prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

bool is_hex(std::string_view s) {
  return !s.empty() && s.size() <= 16 &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

// "-- GPU 3 managed by process 4242 on node 10.0.0.5" or "-- [process information not found]".
void read_rank_tail(std::string_view tail, RasRank& r) {
  tail = core::trim(tail);
  if (!eat(tail, "-- ")) return;
  if (!eat(tail, "GPU ")) return;
  auto m = tail.find(" managed by process ");
  if (m == std::string_view::npos) return;
  r.gpu = cut(tail.substr(0, m), 40);
  tail.remove_prefix(m + std::strlen(" managed by process "));
  auto on = tail.find(" on node ");
  if (on == std::string_view::npos) return;
  if (auto pid = small_int(tail.substr(0, on), 0, kMaxPid)) r.pid = *pid;
  r.host = cut(core::trim(tail.substr(on + std::strlen(" on node "))), 80);
}

// "Rank 3 ..." -> rank 3 and the rest after the number.
std::optional<int> rank_prefix(std::string_view& s) {
  if (!eat(s, "Rank ")) return std::nullopt;
  std::string_view t = s;
  auto v = leading_u64(t);
  if (!v || *v >= static_cast<std::uint64_t>(kMaxRank)) return std::nullopt;
  s = t;
  return static_cast<int>(*v);
}

// "Process 4242 on node 10.0.0.5 managing GPU 0" / "managing GPUs 0,1".
std::optional<RasProcess> read_process(std::string_view s) {
  if (!eat(s, "Process ")) return std::nullopt;
  RasProcess p;
  auto pid = leading_u64(s);
  if (!pid || *pid > static_cast<std::uint64_t>(kMaxPid)) return std::nullopt;
  p.pid = static_cast<int>(*pid);
  s = core::trim(s);
  if (!eat(s, "on node ")) return std::nullopt;
  auto m = s.find(" managing GPU");
  p.host = cut(s.substr(0, m), 80);
  if (m != std::string_view::npos) {
    s.remove_prefix(m + std::strlen(" managing GPU"));
    if (!s.empty() && s[0] == 's') s.remove_prefix(1);
    p.gpus = cut(core::trim(s), 80);
  }
  return p;
}

// The communicator of that hash, made when new; `index` finds it in one step (a report may name
// thousands).
RasComm& comm_for(RasReport& r, std::unordered_map<std::string, std::size_t>& index, const std::string& hash,
                  const std::string& label) {
  if (auto it = index.find(hash); it != index.end()) return r.comms[it->second];
  if (r.comms.size() >= kMaxComms) {
    static thread_local RasComm sink;
    sink = RasComm{};
    return sink;
  }
  RasComm c;
  c.hash = hash;
  c.label = label;
  index.emplace(hash, r.comms.size());
  r.comms.push_back(std::move(c));
  return r.comms.back();
}

// ---------------------------------------------------------------- text

struct TextState {
  enum class Section { Head, Summary, Comms, Errors, Warnings } section = Section::Head;
  enum class Block { None, Incomplete, Dead, Timeout, CommIncomplete, CommError, CommMismatch } block = Block::None;
  RasComm* comm = nullptr;
  std::string summary_header;                          // the second header line of the summary table last seen
  std::unordered_map<std::string, std::size_t> index;  // communicator hash -> its place in comms
  // Within a comm block: what the last "N ranks ..." line said, for the "Rank R -- ..." lines after it.
  std::string group_state;
  RasOpMismatch* op = nullptr;
  RasOpGroup* op_group = nullptr;
  bool error_async = false;
};

void keep_other(RasReport& r, std::string_view line) {
  if (r.other.size() < kMaxOther) r.other.push_back(cut(line));
}

bool all_ints(const std::vector<std::string>& f) {
  return !f.empty() &&
         std::all_of(f.begin(), f.end(), [](const std::string& x) { return core::parse_u64(x).has_value(); });
}

void summary_line(RasReport& r, TextState& st, std::string_view line) {
  auto f = core::split_ws(line);
  if (f.empty()) return;
  if (f[0] == "Nodes" || f[0] == "Processes") return;  // header, first line
  if (core::starts_with(core::trim(line), "(total)") || f[0] == "per" || core::starts_with(core::trim(line), "per ")) {
    st.summary_header = std::string(core::trim(line));
    return;
  }
  if (all_ints(f)) {
    auto at = [&](std::size_t i) { return small_int(f[i], 0, kMaxPid).value_or(-1); };
    const bool totals = core::starts_with(st.summary_header, "(total)");
    if (f.size() == 5 && totals) {  // nodes, processes per node, GPUs per process, processes, GPUs
      r.nodes = at(0);
      r.processes = at(3);
      r.gpus = at(4);
    } else if (f.size() == 3 && totals) {  // nodes, processes, GPUs (totals of an uneven job)
      r.nodes = at(0);
      r.processes = at(1);
      r.gpus = at(2);
    }
    return;  // distribution rows of an uneven job: not kept
  }
  std::string_view t = core::trim(line);
  if (core::starts_with(t, "The outlier node") || core::starts_with(t, "Node ")) {
    push_bounded(r.warnings, cut(t), kMaxKept);
    return;
  }
  keep_other(r, line);
}

void comms_line(RasReport& r, std::string_view line) {
  auto f = core::split_ws(line);
  if (f.empty()) return;
  if (f[0] == "Group" || f[0] == "#") return;
  if (core::starts_with(core::trim(line), "No communicator data collected")) {
    push_bounded(r.warnings, cut(core::trim(line)), kMaxKept);
    return;
  }
  if (f.size() == 8) {
    auto g = small_int(f[0], 0, kMaxRank), n = small_int(f[1], 0, kMaxRank), nodes = small_int(f[2], 0, kMaxRank),
         per_comm = small_int(f[4], 0, kMaxRank), in_group = small_int(f[5], 0, kMaxRank);
    if (g && n && nodes && per_comm && in_group) {
      RasCommGroup cg;
      cg.group = *g;
      cg.comms = *n;
      cg.nodes = *nodes;
      cg.ranks_per_node = cut(f[3], 20);
      cg.ranks_per_comm = *per_comm;
      cg.ranks_in_group = *in_group;
      cg.status = cut(f[6], 40);
      cg.errors = cut(f[7], 60);
      push_bounded(r.groups, std::move(cg), kMaxComms);
      return;
    }
  }
  keep_other(r, line);
}

// "#0-1 (0123456789abcdef) MISMATCH"
bool comm_header(RasReport& r, TextState& st, std::string_view t) {
  if (t.empty() || t[0] != '#') return false;
  auto open = t.find(" (");
  auto close = t.find(") ", open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos) return false;
  std::string_view hash = t.substr(open + 2, close - open - 2);
  if (!is_hex(hash)) return false;
  std::string h = core::lower(hash);
  if (h.size() < 16) h.insert(0, 16 - h.size(), '0');
  std::string_view kind = core::trim(t.substr(close + 2));
  RasComm& c = comm_for(r, st.index, h, cut(t.substr(0, open), 20));
  st.comm = &c;
  st.op = nullptr;
  st.op_group = nullptr;
  st.group_state.clear();
  if (kind == "INCOMPLETE")
    st.block = TextState::Block::CommIncomplete;
  else if (kind == "ERROR")
    st.block = TextState::Block::CommError;
  else if (kind == "MISMATCH")
    st.block = TextState::Block::CommMismatch;
  else
    st.block = TextState::Block::None;
  return true;
}

// "  Missing communicator data from 3 job processes" etc.: the first number of the line.
std::optional<int> first_number(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); i++)
    if (s[i] >= '0' && s[i] <= '9') {
      std::string_view t = s.substr(i);
      auto v = leading_u64(t);
      if (v && *v <= static_cast<std::uint64_t>(kMaxRank)) return static_cast<int>(*v);
      return std::nullopt;
    }
  return std::nullopt;
}

void comm_block_line(RasReport& r, TextState& st, std::string_view t) {
  RasComm& c = *st.comm;
  using B = TextState::Block;
  if (st.block == B::CommIncomplete) {
    if (core::starts_with(t, "Missing communicator data from")) {
      c.missing = first_number(t).value_or(c.missing);
      return;
    }
    if (eat(t, "The missing rank")) {  // NCCL 2.24: "The missing ranks: 1,2,3"
      auto colon = t.find(':');
      if (colon != std::string_view::npos)
        for (const auto& x : core::split(t.substr(colon + 1), ','))
          if (auto v = small_int(core::trim(x), 0, kMaxRank - 1)) {
            RasRank rr;
            rr.rank = *v;
            rr.state = "not responding";
            push_bounded(c.missing_ranks, rr);
          }
      return;
    }
    std::string_view s = t;
    if (auto rk = rank_prefix(s)) {
      RasRank rr;
      rr.rank = *rk;
      rr.state = "not responding";
      read_rank_tail(s, rr);
      push_bounded(c.missing_ranks, rr);
      return;
    }
  } else if (st.block == B::CommError) {
    if (core::starts_with(t, "Initialization error")) {
      st.error_async = false;
      c.init_errors = first_number(t.substr(std::strlen("Initialization error"))).value_or(0);
      st.group_state.clear();
      return;
    }
    if (core::starts_with(t, "Asynchronous error")) {
      st.error_async = true;
      c.async_errors = first_number(t.substr(std::strlen("Asynchronous error"))).value_or(0);
      st.group_state.clear();
      return;
    }
    std::string_view s = t;
    if (auto n = leading_u64(s); n && eat(s, " ranks reported ")) {
      st.group_state = cut(s, 80);
      push_bounded(c.error_counts, cut(t), kMaxList);
      return;
    }
    s = t;
    if (auto rk = rank_prefix(s)) {
      RasRank rr;
      rr.rank = *rk;
      s = core::trim(s);
      if (eat(s, "reported ")) {
        auto dash = s.find(" -- ");
        rr.state = cut(s.substr(0, dash), 80);
        s = dash == std::string_view::npos ? std::string_view{} : s.substr(dash);
      } else {
        rr.state = st.group_state;
      }
      if (rr.state.empty()) rr.state = "error";
      rr.state = (st.error_async ? "asynchronous: " : "initialization: ") + rr.state;
      read_rank_tail(s, rr);
      push_bounded(c.error_ranks, rr);
      return;
    }
  } else if (st.block == B::CommMismatch) {
    if (t == "Communicator ranks have different status") {
      c.status_differs = true;
      st.op = nullptr;
      st.op_group = nullptr;
      st.group_state.clear();
      return;
    }
    std::string_view s = t;
    if (eat(s, "Communicator ranks have different ")) {
      auto end = s.find(" operation counts");
      if (end != std::string_view::npos && c.op_mismatches.size() < 32) {
        RasOpMismatch m;
        m.op = cut(s.substr(0, end), 40);
        c.op_mismatches.push_back(std::move(m));
        st.op = &c.op_mismatches.back();
        st.op_group = nullptr;
        return;
      }
    }
    s = t;
    if (eat(s, "The unknown ranks: ")) {  // NCCL 2.24: ranks without data, by number
      for (const auto& x : core::split(s, ','))
        if (auto v = small_int(core::trim(x), 0, kMaxRank - 1)) {
          RasRank rr;
          rr.rank = *v;
          rr.state = st.group_state.empty() ? "UNKNOWN" : st.group_state;
          push_bounded(c.status_ranks, rr);
        }
      return;
    }
    s = t;
    if (auto n = leading_u64(s); n && *n <= static_cast<std::uint64_t>(kMaxRank)) {
      if (eat(s, " ranks have status ")) {
        st.group_state = cut(s, 40);
        push_bounded(c.status_counts, cut(t), kMaxList);
        if (st.group_state == "NOCOMM") c.nocomm = static_cast<int>(*n);
        st.op_group = nullptr;
        return;
      }
      if (st.op &&
          (eat(s, " ranks have launched up to operation ") || s == " ranks have not launched any operations")) {
        RasOpGroup g;
        g.nranks = static_cast<int>(*n);
        std::string_view cnt = s;
        g.count = s == " ranks have not launched any operations" ? 0 : leading_u64(cnt).value_or(0);
        if (st.op->groups.size() < 64) {
          st.op->groups.push_back(std::move(g));
          st.op_group = &st.op->groups.back();
        }
        return;
      }
    }
    s = t;
    if (auto rk = rank_prefix(s)) {
      RasRank rr;
      rr.rank = *rk;
      s = core::trim(s);
      if (eat(s, "has status ")) {
        auto dash = s.find(" -- ");
        rr.state = cut(s.substr(0, dash), 40);
        if (rr.state == "NOCOMM") c.nocomm = std::max(c.nocomm, 1);
        read_rank_tail(dash == std::string_view::npos ? std::string_view{} : s.substr(dash), rr);
        push_bounded(c.status_ranks, rr);
        st.op_group = nullptr;
        return;
      }
      std::optional<std::uint64_t> count;
      if (eat(s, "has launched up to operation ")) {
        count = leading_u64(s);
      } else if (eat(s, "has not launched any operations")) {
        count = 0;
      }
      if (count && st.op) {  // a group of one rank
        rr.ops = static_cast<std::int64_t>(std::min<std::uint64_t>(*count, INT64_MAX));
        read_rank_tail(s, rr);
        if (st.op->groups.size() < 64) {
          RasOpGroup g;
          g.count = *count;
          g.nranks = 1;
          g.ranks.push_back(rr);
          st.op->groups.push_back(std::move(g));
        }
        st.op_group = nullptr;
        return;
      }
      if (!count && core::starts_with(s, "--")) {  // one of the group named just before
        read_rank_tail(s, rr);
        if (st.op_group) {
          rr.ops = static_cast<std::int64_t>(std::min<std::uint64_t>(st.op_group->count, INT64_MAX));
          push_bounded(st.op_group->ranks, rr, kMaxGroupRanks);
        } else {
          rr.state = st.group_state;
          if (rr.state == "NOCOMM") c.nocomm = std::max(c.nocomm, 1);
          push_bounded(c.status_ranks, rr);
        }
        return;
      }
    }
  }
  keep_other(r, t);
}

void section_line(RasReport& r, TextState& st, std::string_view line) {
  std::string_view t = core::trim(line);
  using B = TextState::Block;
  const bool indented = !line.empty() && (line[0] == ' ' || line[0] == '\t');
  if (!indented) {
    st.comm = nullptr;
    st.op = nullptr;
    st.op_group = nullptr;
    if (t == "INCOMPLETE")
      st.block = B::Incomplete;
    else if (t == "DEAD")
      st.block = B::Dead;
    else if (t == "TIMEOUT")
      st.block = B::Timeout;
    else if (!comm_header(r, st, t)) {
      st.block = B::None;
      keep_other(r, line);
    }
    push_bounded(r.warnings, cut(t), kMaxKept);
    return;
  }
  push_bounded(r.warnings, cut(t), kMaxKept);
  switch (st.block) {
    case B::Incomplete:
      if (core::starts_with(t, "Missing communicator data from")) {
        r.processes_missing = first_number(t).value_or(r.processes_missing);
        return;
      }
      if (auto p = read_process(t)) {
        push_bounded(r.missing_processes, std::move(*p));
        return;
      }
      if (core::starts_with(t, "[could not find information")) return;
      break;
    case B::Dead:
      if (auto p = read_process(t)) {
        push_bounded(r.dead_processes, std::move(*p));
        return;
      }
      if (t.find("considered dead") != std::string_view::npos) {
        r.processes_dead = first_number(t).value_or(r.processes_dead);
        return;
      }
      if (core::starts_with(t, "[could not find information")) return;
      break;
    case B::Timeout:
      if (core::starts_with(t, "Encountered ")) {
        r.timeouts = first_number(t).value_or(r.timeouts);
        return;
      }
      break;
    case B::CommIncomplete:
    case B::CommError:
    case B::CommMismatch:
      if (st.comm) {
        comm_block_line(r, st, t);
        return;
      }
      break;
    case B::None:
      break;
  }
  keep_other(r, line);
}

void parse_text(RasReport& r, std::string_view text) {
  TextState st;
  using S = TextState::Section;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, (nl == std::string_view::npos ? text.size() : nl) - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    if (line.size() > kMaxLine) line = line.substr(0, kMaxLine);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string_view t = core::trim(line);
    if (t.empty()) continue;
    if (!t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return c == '='; })) continue;  // underlines
    std::string_view s = t;
    if (eat(s, "NCCL version ")) {
      auto w = s.find(" compiled with CUDA ");
      r.nccl_version = cut(s.substr(0, w), 60);
      if (w != std::string_view::npos) r.cuda_compiled = cut(core::trim(s.substr(w + 20)), 20);
      continue;
    }
    s = t;
    if (eat(s, "CUDA runtime version ")) {  // "CUDA runtime version 12090, driver version 12080"
      auto comma = s.find(", driver version ");
      if (auto v = small_int(s.substr(0, comma), 0, 1000000)) r.cuda_runtime = *v;
      if (comma != std::string_view::npos)
        if (auto v = small_int(s.substr(comma + 17), 0, 1000000)) r.cuda_driver = *v;
      continue;
    }
    if (t == "Job summary") {
      st.section = S::Summary;
      continue;
    }
    s = t;
    if (eat(s, "Communicators...")) {
      st.section = S::Comms;
      s = core::trim(s);
      if (eat(s, "(")) {
        auto close = s.find("s)");
        if (auto v = core::parse_double(s.substr(0, close)); v && std::isfinite(*v) && *v >= 0 && *v < 1e6)
          r.collection_s = *v;
      }
      continue;
    }
    if (t == "Errors" && (line[0] != ' ')) {
      st.section = S::Errors;
      st.block = TextState::Block::None;
      continue;
    }
    if (t == "Warnings" && (line[0] != ' ')) {
      st.section = S::Warnings;
      st.block = TextState::Block::None;
      r.complete = true;
      continue;
    }
    switch (st.section) {
      case S::Head:
        keep_other(r, line);
        break;
      case S::Summary:
        summary_line(r, st, line);
        break;
      case S::Comms:
        comms_line(r, line);
        break;
      case S::Errors:
      case S::Warnings:
        section_line(r, st, line);
        break;
    }
  }
  if (!r.groups.empty()) {
    long total = 0;
    for (const auto& g : r.groups) total += g.comms;
    r.comms_total = static_cast<int>(std::min<long>(total, kMaxRank));
  }
  // A named communicator's size is its group's ("#2-0": group 2 of the table).
  for (auto& c : r.comms) {
    std::string_view l = c.label;
    if (!eat(l, "#")) continue;
    auto g = small_int(l.substr(0, l.find('-')), 0, kMaxRank);
    if (!g) continue;
    for (const auto& row : r.groups)
      if (row.group == *g) c.size = row.ranks_per_comm;
  }
}

// ---------------------------------------------------------------- JSON

const char* nccl_result_text(std::int64_t v) {
  switch (v) {
    case 1:
      return "Unhandled CUDA error";
    case 2:
      return "System error";
    case 3:
      return "Internal error";
    case 4:
      return "Invalid argument";
    case 5:
      return "Invalid usage";
    case 6:
      return "Remote process error";
    case 7:
      return "NCCL operation in progress";
    default:
      return "Unexpected error";
  }
}

std::string jstr(const json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_string()) return "";
  return cut(it->get_ref<const std::string&>());
}
std::optional<std::int64_t> jint(const json& o, const char* key, std::int64_t lo, std::int64_t hi) {
  auto it = o.find(key);
  if (it == o.end()) return std::nullopt;
  std::int64_t v = 0;
  if (it->is_number_unsigned()) {
    auto u = it->get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
    v = static_cast<std::int64_t>(u);
  } else if (it->is_number_integer()) {
    v = it->get<std::int64_t>();
  } else {
    return std::nullopt;
  }
  if (v < lo || v > hi) return std::nullopt;
  return v;
}
bool jbool(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_boolean() && it->get<bool>();
}

RasRank json_rank(const json& o) {
  RasRank r;
  r.rank = static_cast<int>(jint(o, "rank", 0, kMaxRank - 1).value_or(-1));
  r.pid = static_cast<int>(jint(o, "pid", 0, kMaxPid).value_or(-1));
  std::string host = jstr(o, "host");
  r.host = host == "unknown" ? "" : host;
  auto cuda = jint(o, "cuda_dev", 0, 1 << 16), nvml = jint(o, "nvml_dev", 0, 1 << 16);
  if (cuda) {
    r.gpu = std::to_string(*cuda);
    if (nvml && *nvml != *cuda) r.gpu += " (NVML " + std::to_string(*nvml) + ")";
  }
  return r;
}

// NCCL 2.28.7 to 2.28.9 print a missing rank without the comma after "nvml_dev": a line that
// ends a value followed by a line that starts a key gets its comma back.
std::optional<std::string> repair_commas(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 64);
  bool changed = false;
  std::size_t pos = 0;
  std::string_view prev;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, (nl == std::string_view::npos ? text.size() : nl) - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    std::string_view t = core::trim(line);
    std::string_view p = core::trim(prev);
    if (!t.empty() && t[0] == '"' && !p.empty()) {
      char e = p.back();
      if (e != ',' && e != '{' && e != '[' && e != ':') {
        // out ends with prev's line and its newline: put the comma before that newline.
        auto at = out.find_last_not_of(" \t\r\n");
        if (at != std::string::npos) {
          out.insert(at + 1, ",");
          changed = true;
        }
      }
    }
    out.append(line);
    if (nl != std::string_view::npos) out.push_back('\n');
    if (!t.empty()) prev = line;
  }
  if (!changed) return std::nullopt;
  return out;
}

std::optional<json> parse_json_bounded(std::string_view text) {
  bool too_deep = false;
  json::parser_callback_t cb = [&](int depth, json::parse_event_t, json&) {
    if (depth > 12) too_deep = true;
    return !too_deep;
  };
  json j = json::parse(text.begin(), text.end(), cb, false);
  if (j.is_discarded() || too_deep) return std::nullopt;
  return j;
}

void parse_json(RasReport& r, std::string_view text) {
  auto j = parse_json_bounded(text);
  if (!j) {
    if (auto fixed = repair_commas(text)) {
      j = parse_json_bounded(*fixed);
      if (j) r.json_repaired = true;
    }
  }
  if (!j || !j->is_object()) {
    keep_other(r, "the JSON report could not be read" + std::string(j ? " (not an object)" : ""));
    return;
  }
  r.complete = true;
  const json& d = *j;
  r.nccl_version = jstr(d, "nccl_version");
  r.cuda_runtime = static_cast<int>(jint(d, "cuda_runtime_version", 0, 1000000).value_or(-1));
  r.cuda_driver = static_cast<int>(jint(d, "cuda_driver_version", 0, 1000000).value_or(-1));
  r.comms_total = static_cast<int>(jint(d, "communicators_count", 0, kMaxRank).value_or(-1));
  if (auto it = d.find("ras"); it != d.end() && it->is_object()) {
    r.timeouts = static_cast<int>(jint(*it, "timeouts_count", 0, kMaxRank).value_or(0));
    if (auto t = it->find("collection_time_sec"); t != it->end() && t->is_number()) {
      double v = t->get<double>();
      if (std::isfinite(v) && v >= 0 && v < 1e6) r.collection_s = v;
    }
  }
  auto cs = d.find("communicators");
  if (cs == d.end() || !cs->is_array()) return;
  std::map<std::pair<std::string, int>, RasProcess> dead;  // (host, pid) of ranks considered dead
  for (const auto& jc : *cs) {
    if (!jc.is_object() || r.comms.size() >= kMaxComms) continue;
    RasComm c;
    std::string h = jstr(jc, "hash");
    std::string_view hv = h;
    if (core::starts_with(hv, "0x") || core::starts_with(hv, "0X")) hv.remove_prefix(2);
    if (is_hex(hv)) {
      c.hash = core::lower(hv);
      if (c.hash.size() < 16) c.hash.insert(0, 16 - c.hash.size(), '0');
    } else {
      c.hash = cut(h, 40);
    }
    c.size = static_cast<int>(jint(jc, "size", 0, kMaxRank).value_or(-1));
    c.ranks_reported = static_cast<int>(jint(jc, "ranks_count", 0, kMaxRank).value_or(-1));
    // Operation counts per kind: count -> how many ranks have it, and the first of them.
    struct Have {
      long n = 0;
      std::vector<RasRank> ranks;
    };
    std::map<std::string, std::map<std::uint64_t, Have>> counts;
    std::map<std::string, int> states;
    std::vector<std::pair<RasRank, std::string>> rank_state;
    if (auto rs = jc.find("ranks"); rs != jc.end() && rs->is_array()) {
      for (const auto& jr : *rs) {
        if (!jr.is_object()) continue;
        RasRank rk = json_rank(jr);
        std::string state = "RUNNING";
        std::int64_t init = 0, async = 0;
        if (auto st = jr.find("status"); st != jr.end() && st->is_object()) {
          init = jint(*st, "init_state", INT32_MIN, INT32_MAX).value_or(0);
          async = jint(*st, "async_error", INT32_MIN, INT32_MAX).value_or(0);
          if (jbool(*st, "abort_flag"))
            state = "ABORT";
          else if (jbool(*st, "finalize_called") || jbool(*st, "destroy_flag"))
            state = "FINALIZE";
          else if (init != 0)
            state = "INIT";
        }
        if (init != 0 && init != 7) {
          c.init_errors++;
          RasRank e = rk;
          e.state = std::string("initialization: ") + nccl_result_text(init);
          push_bounded(c.error_ranks, e);
        }
        if (async != 0 && async != 7) {
          c.async_errors++;
          RasRank e = rk;
          e.state = std::string("asynchronous: ") + nccl_result_text(async);
          push_bounded(c.error_ranks, e);
        }
        if (states.size() < 8 || states.count(state)) states[state]++;
        if (rank_state.size() < 65536) rank_state.emplace_back(rk, state);
        if (auto cc = jr.find("collective_counts"); cc != jr.end() && cc->is_object()) {
          for (auto it = cc->begin(); it != cc->end(); ++it) {
            if (counts.size() >= 32 && !counts.count(it.key())) continue;
            auto v = jint(*cc, it.key().c_str(), 0, INT64_MAX);
            if (!v) continue;
            auto& byv = counts[cut(it.key(), 40)];
            if (byv.size() >= 4096 && !byv.count(static_cast<std::uint64_t>(*v))) continue;
            auto& have = byv[static_cast<std::uint64_t>(*v)];
            have.n++;
            if (have.ranks.size() < kMaxGroupRanks) {
              RasRank x = rk;
              x.ops = *v;
              have.ranks.push_back(std::move(x));
            }
          }
        }
      }
    }
    if (auto ms = jc.find("missing_ranks"); ms != jc.end() && ms->is_array()) {
      for (const auto& jm : *ms) {
        if (!jm.is_object()) continue;
        RasRank rk = json_rank(jm);
        bool unresponsive = true, is_dead = false;
        if (auto st = jm.find("status"); st != jm.end() && st->is_object()) {
          unresponsive = jbool(*st, "unresponsive");
          is_dead = jbool(*st, "considered_dead");
        }
        if (unresponsive || is_dead) {
          c.missing++;
          rk.state = is_dead ? "considered dead" : "not responding";
          push_bounded(c.missing_ranks, rk);
          if (is_dead && dead.size() < kMaxList) {
            RasProcess p;
            p.pid = rk.pid;
            p.host = rk.host;
            p.gpus = rk.gpu;
            dead.emplace(std::make_pair(rk.host, rk.pid), p);
          }
        } else {
          c.nocomm++;
          rk.state = "NOCOMM";
          push_bounded(c.status_ranks, rk);
        }
      }
    }
    if (c.nocomm > 0) states["NOCOMM"] += c.nocomm;
    if (states.size() > 1) {
      c.status_differs = true;
      // The most common status is the communicator's; the others' ranks are listed.
      auto common = std::max_element(states.begin(), states.end(), [](const auto& a, const auto& b) {
                      return a.second < b.second;
                    })->first;
      for (const auto& [s, n] : states) c.status_counts.push_back(std::to_string(n) + " ranks have status " + s);
      for (auto& [rk, s] : rank_state)
        if (s != common) {
          RasRank x = rk;
          x.state = s;
          push_bounded(c.status_ranks, x);
        }
    }
    for (auto& [op, byv] : counts) {
      if (byv.size() < 2) continue;
      RasOpMismatch m;
      m.op = op;
      // Most common count first, as NCCL prints them.
      std::vector<std::pair<std::uint64_t, Have>> gs(byv.begin(), byv.end());
      std::stable_sort(gs.begin(), gs.end(), [](const auto& a, const auto& b) { return a.second.n > b.second.n; });
      for (auto& [v, have] : gs) {
        RasOpGroup g;
        g.count = v;
        g.nranks = static_cast<int>(std::min<long>(have.n, kMaxRank));
        g.ranks = std::move(have.ranks);
        if (m.groups.size() < 64) m.groups.push_back(std::move(g));
      }
      if (c.op_mismatches.size() < 32) c.op_mismatches.push_back(std::move(m));
    }
    r.comms.push_back(std::move(c));
  }
  for (auto& [k, p] : dead) r.dead_processes.push_back(p);
  r.processes_dead = static_cast<int>(r.dead_processes.size());
}

std::string rank_words(const RasRank& r) {
  std::string s = "rank " + (r.rank >= 0 ? std::to_string(r.rank) : std::string("?"));
  std::vector<std::string> where;
  if (!r.gpu.empty()) where.push_back("GPU " + r.gpu);
  if (r.pid >= 0) where.push_back("pid " + std::to_string(r.pid));
  if (!r.host.empty()) where.push_back("on " + r.host);
  if (!where.empty()) s += " (" + core::join(where, " ") + ")";
  return s;
}

std::string process_words(const RasProcess& p) {
  std::string s = "process " + (p.pid >= 0 ? std::to_string(p.pid) : std::string("?"));
  if (!p.host.empty()) s += " on " + p.host;
  if (!p.gpus.empty()) s += " (GPU " + p.gpus + ")";
  return s;
}

template <typename T, typename F>
std::string list_words(const std::vector<T>& v, F f, std::size_t max = 8) {
  std::vector<std::string> w;
  for (const auto& x : v) w.push_back(f(x));
  return core::join(w, ", ", max);
}

// Hosts and pids to look at, for a remedy.
std::string where_to_look(const std::vector<RasRank>& ranks) {
  std::vector<std::string> w;
  for (const auto& r : ranks) {
    if (r.host.empty() && r.pid < 0) continue;
    std::string s = r.pid >= 0 ? "pid " + std::to_string(r.pid) : std::string("the rank's process");
    if (!r.host.empty()) s += " on " + r.host;
    if (std::find(w.begin(), w.end(), s) == w.end()) w.push_back(s);
  }
  return core::join(w, ", ", 6);
}

const char* kLookRemedy =
    "is the process alive, stopped (`ps -o stat= -p PID`: T) or stuck in a kernel or a network wait? Read that node's "
    "`dmesg` (Xid errors, the OOM killer, link flaps) and the job's NCCL_DEBUG=INFO log of that rank; `fabscope job "
    "status` with the profiler plugin names the operation each rank is in";

}  // namespace

// ---------------------------------------------------------------- public

std::uint64_t RasOpMismatch::max_count() const {
  std::uint64_t m = 0;
  for (const auto& g : groups) m = std::max(m, g.count);
  return m;
}

int RasOpMismatch::ranks_behind() const {
  const auto m = max_count();
  long n = 0;
  for (const auto& g : groups)
    if (g.count < m) n += g.nranks;
  return static_cast<int>(std::min<long>(n, kMaxRank));
}

RasEndpoint parse_ras_address(std::string_view text) {
  std::string_view t = core::trim(text);
  auto bad = [&](const std::string& why) {
    return Error("RAS address '" + cut(text, 80) + "': " + why + " (expected host:port, [v6]:port, host or port)");
  };
  if (t.empty()) throw bad("empty");
  RasEndpoint e;
  auto port_of = [&](std::string_view p) {
    auto v = core::parse_int(p);
    if (!v || *v < 1 || *v > 65535 || p.empty() ||
        !std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw bad("port '" + cut(p, 20) + "' is not from 1 to 65535");
    return static_cast<int>(*v);
  };
  if (t[0] == '[') {
    auto close = t.find(']');
    if (close == std::string_view::npos || close == 1) throw bad("no closing ']'");
    e.host = std::string(t.substr(1, close - 1));
    std::string_view rest = t.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') throw bad("text after ']'");
      e.port = port_of(rest.substr(1));
    }
  } else if (std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    e.host = "localhost";
    e.port = port_of(t);
  } else {
    auto colons = std::count(t.begin(), t.end(), ':');
    if (colons == 1) {
      auto c = t.find(':');
      e.host = std::string(t.substr(0, c));
      e.port = port_of(t.substr(c + 1));
    } else {
      e.host = std::string(t);  // a host name, or an IPv6 address without brackets (no port)
    }
  }
  if (e.host.empty()) throw bad("no host");
  if (e.host.size() > 255 || !std::all_of(e.host.begin(), e.host.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' || c == '_' || c == '%';
      }))
    throw bad("host is not a name or an address");
  return e;
}

namespace {

// The connection and what it has received and not yet consumed.
struct Conversation {
  net::Fd fd;
  std::string where;  // "NCCL RAS at host:port"
  std::string in;
  std::size_t total = 0;  // bytes received in all

  // Reads until a full line is in `in` (returned, without its newline), the peer closes, or the
  // deadline. nullopt with `why` set otherwise.
  std::optional<std::string> line(net::Deadline deadline, std::string& why) {
    while (true) {
      auto nl = in.find('\n');
      if (nl != std::string::npos) {
        std::string l = in.substr(0, nl);
        in.erase(0, nl + 1);
        if (!l.empty() && l.back() == '\r') l.pop_back();
        return l;
      }
      if (in.size() > 1024) {
        why = "long";
        return std::nullopt;
      }
      int r = more(deadline, 1024);
      if (r == 0) {
        why = "closed";
        return std::nullopt;
      }
      if (r < 0) {
        why = "timeout";
        return std::nullopt;
      }
    }
  }
  // One read: >0 bytes appended, 0 closed, -1 the deadline passed. Throws Error on a socket error.
  int more(net::Deadline deadline, std::size_t cap) {
    char buf[65536];
    while (true) {
      ssize_t r = ::recv(fd.get(), buf, std::min(sizeof buf, cap), MSG_DONTWAIT);
      if (r > 0) {
        in.append(buf, static_cast<std::size_t>(r));
        total += static_cast<std::size_t>(r);
        return static_cast<int>(r);
      }
      if (r == 0 || (r < 0 && errno == ECONNRESET)) return 0;  // a reset ends it as a close does
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        throw Error(where + ": " + std::strerror(errno) + " after " + std::to_string(total) + " bytes");
      int left = net::ms_left(deadline);
      if (left == 0) return -1;
      pollfd p{fd.get(), POLLIN, 0};
      ::poll(&p, 1, left);
    }
  }
  void send(std::string_view s, net::Deadline deadline) {
    std::string why = net::send_all(fd.get(), s, deadline);
    if (!why.empty()) throw Error(where + ": sending '" + cut(core::trim(s), 40) + "': " + why);
  }
};

std::string quoted_line(std::string_view l) { return "\"" + cut(l, 80) + "\""; }

}  // namespace

std::string ras_fetch(const RasQueryOptions& o) {
  const RasEndpoint ep = parse_ras_address(o.address);
  if (!(o.timeout_s > 0) || o.timeout_s > 3600)
    throw Error("RAS query: timeout " + core::format_number(o.timeout_s) + " s is not from 0 to 3600");
  if (o.collective_timeout_s < 0 || o.collective_timeout_s > 3600)
    throw Error("RAS query: collective timeout " + std::to_string(o.collective_timeout_s) + " s is not from 0 to 3600");
  const std::string fmt = core::lower(o.format);
  if (fmt != "text" && fmt != "json" && fmt != "auto")
    throw Error("RAS query: format '" + cut(o.format, 20) + "' is not text, json or auto");
  const std::size_t max_bytes = std::max<std::size_t>(o.max_bytes, 4096);
  const std::string where = "NCCL RAS at " + (ep.host.find(':') != std::string::npos ? "[" + ep.host + "]" : ep.host) +
                            ":" + std::to_string(ep.port);
  const auto start = net::Clock::now();
  const auto deadline = start + std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
  auto elapsed = [&] {
    return core::format_double("%.1f", std::chrono::duration<double>(net::Clock::now() - start).count());
  };

  // Several processes of a node may listen on the same port (SO_REUSEPORT) and the kernel picks
  // one per connection: one that is stopped never answers, so a silent handshake is tried again
  // on a new connection (as NCCL's own client does) until the deadline.
  int attempts = 0;
  Conversation c;
  c.where = where;
  while (true) {
    attempts++;
    std::string why;
    net::Fd fd = net::connect_tcp(ep.host, ep.port, deadline, why);
    if (!fd) {
      std::string hint;
      if (why.find("refused") != std::string::npos)
        hint =
            " (no NCCL 2.24+ process of a running job listens there: is the job on this node, NCCL_RAS_ENABLE not 0, "
            "and NCCL_RAS_ADDR the address asked?)";
      throw Error(where + ": " + why + hint);
    }
    c = Conversation{};
    c.where = where;
    c.fd = std::move(fd);
    c.send("CLIENT PROTOCOL 2\n", deadline);
    const auto handshake = std::min(deadline, net::Clock::now() + std::chrono::seconds(2));
    auto l = c.line(handshake, why);
    // A server that has begun to answer is given the whole deadline (a slow one, not a stopped one).
    if (!l && why == "timeout" && c.total > 0) l = c.line(deadline, why);
    if (l) {
      std::string_view s = *l;
      std::string up = core::upper(s.substr(0, std::min<std::size_t>(s.size(), 16)));
      std::optional<std::int64_t> ver;
      if (up == "SERVER PROTOCOL ") ver = core::parse_int(s.substr(16));
      if (!ver || *ver < 1 || *ver > 1000)
        throw Error(where + ": not a RAS server: its first line is " + quoted_line(s));
      break;
    }
    if (why == "closed") {
      if (c.total == 0) throw Error(where + ": closed the connection without a word (not a RAS server?)");
      throw Error(where + ": not a RAS server: it closed after " + quoted_line(c.in));
    }
    if (why == "long") throw Error(where + ": not a RAS server: its first line is " + quoted_line(c.in));
    if (c.total > 0 && net::ms_left(deadline) == 0)
      throw Error(where + ": timed out after " + elapsed() + " s in the handshake, " + std::to_string(c.total) +
                  " bytes received: " + quoted_line(c.in));
    if (net::ms_left(deadline) == 0)
      throw Error(where + ": no answer to the handshake in " + elapsed() + " s (" + std::to_string(attempts) +
                  " connection" + (attempts > 1 ? "s" : "") +
                  "): the process that accepted it may be stopped or hung; its peers on other nodes can answer");
  }

  auto expect_ok = [&](const char* what) {
    std::string why;
    auto l = c.line(deadline, why);
    if (!l) {
      if (why == "timeout") throw Error(where + ": no answer to " + what + " in " + elapsed() + " s");
      throw Error(where + ": " + (why == "closed" ? "closed the connection" : "sent an overlong line") + " after " +
                  what);
    }
    return *l;
  };
  if (o.collective_timeout_s > 0) {
    c.send("TIMEOUT " + std::to_string(o.collective_timeout_s) + "\n", deadline);
    std::string l = expect_ok("TIMEOUT");
    if (core::upper(core::trim(l)) != "OK")
      throw Error(where + ": refused TIMEOUT " + std::to_string(o.collective_timeout_s) + ": " + quoted_line(l));
  }
  if (fmt != "text") {
    c.send("SET FORMAT json\n", deadline);
    std::string l = expect_ok("SET FORMAT json");
    if (core::upper(core::trim(l)) != "OK") {
      if (fmt == "json")
        throw Error(where + ": the server does not write JSON (NCCL before 2.28.7?): " + quoted_line(l));
      if (!core::starts_with(core::upper(l), "ERROR"))
        throw Error(where + ": unexpected answer to SET FORMAT: " + quoted_line(l));
    }
  }
  c.send(o.verbose ? "VERBOSE STATUS\n" : "STATUS\n", deadline);
  c.in.clear();
  const std::size_t before = c.total;
  while (true) {
    if (c.in.size() > max_bytes)
      throw Error(where + ": the report exceeds " + std::to_string(max_bytes) + " bytes; not read further");
    int r = c.more(deadline, max_bytes + 1 - c.in.size());
    if (r == 0) break;
    if (r < 0)
      throw Error(where + ": timed out after " + elapsed() + " s with " + std::to_string(c.total - before) +
                  " bytes of the report (the server gathers for up to its time-out plus 5 s when a process does not "
                  "answer: a longer --timeout may help)");
  }
  if (c.in.empty()) throw Error(where + ": closed the connection without a report");
  // The report's end: text has its Warnings section, JSON its closing brace.
  std::string_view body = core::trim(c.in);
  const bool is_json = !body.empty() && body[0] == '{';
  const bool ended = is_json ? body.back() == '}'
                             : c.in.find("\nWarnings\n") != std::string::npos || core::starts_with(c.in, "Warnings\n");
  if (!ended) {
    auto last_nl = body.rfind('\n');
    std::string_view last = last_nl == std::string_view::npos ? body : body.substr(last_nl + 1);
    throw Error(where + ": closed after " + std::to_string(c.in.size()) +
                " bytes, before the report's end (its last line: " + quoted_line(last) + ")");
  }
  return c.in;
}

RasReport parse_ras_report(std::string_view text, std::string_view source) {
  RasReport r;
  r.source = cut(source, 200);
  std::string_view t = core::trim(text);
  if (!t.empty() && t[0] == '{') {
    r.format = "json";
    parse_json(r, text);
  } else {
    r.format = "text";
    parse_text(r, text);
  }
  return r;
}

std::vector<Finding> ras_findings(const RasReport& r) {
  std::vector<Finding> out;
  const std::string from = r.source.empty() ? "NCCL's RAS" : "NCCL's RAS (" + r.source + ")";
  // Processes of the job, whatever communicator.
  if (r.processes_missing > 0) {
    std::string ev = std::to_string(r.processes_missing) + " process" + (r.processes_missing > 1 ? "es" : "") +
                     " sent no data to " + from;
    if (r.processes >= 0) ev += " (job: " + std::to_string(r.processes) + " processes)";
    if (!r.missing_processes.empty()) ev += ": " + list_words(r.missing_processes, process_words);
    std::string look;
    for (const auto& p : r.missing_processes)
      if (p.pid >= 0)
        look += (look.empty() ? "" : ", ") + std::string("pid ") + std::to_string(p.pid) + " on " + p.host;
    out.push_back(registered_finding(
        "job.ras_missing", Severity::Fail, "job", "processes of the job do not answer NCCL's RAS", ev,
        std::string("Look at ") + (look.empty() ? "the processes RAS lists with VERBOSE STATUS (--verbose)" : look) +
            ": " + kLookRemedy));
  }
  if (r.processes_dead > 0) {
    std::string ev = std::to_string(r.processes_dead) + " process" + (r.processes_dead > 1 ? "es" : "") +
                     " considered dead (unreachable over RAS's network)";
    if (!r.dead_processes.empty()) ev += ": " + list_words(r.dead_processes, process_words);
    out.push_back(registered_finding("job.ras_missing", Severity::Fail, "job",
                                     "processes of the job are unreachable: ended, killed or their node is down", ev,
                                     std::string("Check whether they still run and the node answers (ping, `ssh NODE "
                                                 "uptime`); then ") +
                                         kLookRemedy));
  }
  for (const auto& c : r.comms) {
    const std::string subject = "comm " + c.hash;
    const std::string size = c.size > 0 ? " of " + std::to_string(c.size) : "";
    if (c.missing > 0) {
      std::string ev = std::to_string(c.missing) + size + " rank" + (c.missing > 1 || c.size > 1 ? "s" : "") + " without data";
      if (!c.missing_ranks.empty())
        ev += ": " + list_words(c.missing_ranks, [](const RasRank& x) {
                return rank_words(x) + (x.state == "considered dead" ? " considered dead" : "");
              });
      std::string look = where_to_look(c.missing_ranks);
      out.push_back(registered_finding(
          "job.ras_missing", Severity::Fail, subject,
          "ranks of communicator " + c.hash + " do not answer NCCL's RAS (their process is stopped, hung or gone)", ev,
          "Look at " +
              (look.empty() ? std::string("the ranks listed (ask again with --verbose for their hosts)") : look) +
              ": " + kLookRemedy));
    }
    if (c.status_differs || c.nocomm > 0 || !c.op_mismatches.empty()) {
      std::vector<std::string> ev;
      std::vector<RasRank> look_at;
      for (const auto& m : c.op_mismatches) {
        std::vector<std::string> gs;
        const auto top = m.max_count();
        for (const auto& g : m.groups) {
          std::string s =
              std::to_string(g.nranks) + (g.nranks == 1 ? " rank" : " ranks") + " at " + std::to_string(g.count);
          if (!g.ranks.empty()) s += " (" + list_words(g.ranks, rank_words, 4) + ")";
          gs.push_back(s);
          if (g.count < top)
            for (const auto& x : g.ranks) push_bounded(look_at, x, 16);
        }
        ev.push_back(m.op + " launched: " + core::join(gs, ", ", 6));
      }
      if (c.status_differs) {
        std::string s = "status differs: " + core::join(c.status_counts, ", ", 4);
        if (!c.status_ranks.empty())
          s += (c.status_counts.empty() ? "" : "; ") +
               list_words(
                   c.status_ranks, [](const RasRank& x) { return rank_words(x) + " " + x.state; }, 4);
        ev.push_back(s);
        for (const auto& x : c.status_ranks) push_bounded(look_at, x, 16);
      } else if (c.nocomm > 0) {
        ev.push_back(std::to_string(c.nocomm) +
                     " ranks answered without the communicator (destroyed or aborted there)");
      }
      std::string look = where_to_look(look_at);
      out.push_back(registered_finding(
          "job.ras_mismatch", Severity::Warn, subject,
          "ranks of communicator " + c.hash + " differ in operations launched or state", core::join(ev, "; "),
          "Ranks gather at slightly different instants, so a difference of a few operations in a running job can be "
          "in flight: ask again; a rank that stays behind while the others wait is the one holding the job" +
              (look.empty() ? std::string(". ") : " (here: " + look + "). ") +
              "`fabscope job status` with the profiler plugin shows which operation each rank is in and for how long; "
              "a rank in a different state (INIT, FINALIZE, ABORT, NOCOMM) points at that process's own log "
              "(NCCL_DEBUG=INFO, the program's traceback)"));
    }
    if (c.init_errors > 0 || c.async_errors > 0) {
      std::string ev;
      if (c.init_errors > 0) ev += std::to_string(c.init_errors) + " rank(s) with an initialization error";
      if (c.async_errors > 0)
        ev += (ev.empty() ? "" : ", ") + std::to_string(c.async_errors) + " rank(s) with an asynchronous error";
      if (!c.error_counts.empty()) ev += "; " + core::join(c.error_counts, ", ", 4);
      if (!c.error_ranks.empty())
        ev += ": " + list_words(
                         c.error_ranks, [](const RasRank& x) { return rank_words(x) + " " + x.state; }, 6);
      std::string look = where_to_look(c.error_ranks);
      out.push_back(registered_finding(
          "job.ras_error", Severity::Warn, subject, "NCCL reported errors on ranks of communicator " + c.hash, ev,
          "Read the NCCL_DEBUG=INFO log (WARN lines) of " + (look.empty() ? std::string("the ranks listed") : look) +
              " and that node's `dmesg` (Xid, NVLink or NIC errors); a \"Remote process error\" points at the peer "
              "that failed first: start from the rank whose error is not a remote one"));
    }
  }
  if (r.timeouts > 0) {
    out.push_back(registered_finding(
        "job.ras_error", Severity::Warn, "job", "NCCL's RAS timed out reaching some processes while it gathered",
        std::to_string(r.timeouts) + " communication time-out" + (r.timeouts > 1 ? "s" : "") + " while gathering" +
            (r.collection_s >= 0 ? " (gathered in " + core::format_double("%.2f", r.collection_s) + " s)" : ""),
        "Some processes answer late or not at all: the ranks missing above are the first suspects; when none is "
        "listed, ask again with a longer gathering time-out (NCCL's TIMEOUT, `ncclras -t SECS`) and look at those "
        "nodes' load and network"));
  }
  if (!r.complete) {
    out.push_back(registered_finding(
        "job.ras_error", Severity::Warn, "job", "NCCL's RAS report ended before its end",
        "format " + r.format + ", read from " + (r.source.empty() ? std::string("?") : r.source) +
            (r.other.empty() ? std::string() : "; not understood: " + core::join(r.other, " | ", 3)),
        "A report cut short says nothing of the ranks it did not reach: ask again (a longer --timeout), or read "
        "`ncclras` on that node for comparison"));
  }
  return out;
}

std::string ras_summary(const RasReport& r) {
  auto n = [](long v, const char* one, const char* many) { return std::to_string(v) + " " + (v == 1 ? one : many); };
  std::vector<std::string> parts;
  if (r.nodes >= 0) parts.push_back(n(r.nodes, "node", "nodes"));
  if (r.processes >= 0) parts.push_back(n(r.processes, "process", "processes"));
  if (r.gpus >= 0) parts.push_back(n(r.gpus, "GPU", "GPUs"));
  const long comms = r.comms_total >= 0 ? r.comms_total : static_cast<long>(r.comms.size());
  parts.push_back(n(comms, "communicator", "communicators"));
  if (r.collection_s >= 0) parts.push_back("gathered in " + core::format_double("%.3f", r.collection_s) + " s");
  std::string head = "NCCL " + (r.nccl_version.empty() ? std::string("?") : r.nccl_version) + " (" +
                     (r.format.empty() ? std::string("text") : r.format) + " report" +
                     (r.complete ? "" : ", cut short") + ")";
  return head + ": " + core::join(parts, ", ");
}

namespace {
json rank_json(const RasRank& r) {
  json j = {{"rank", r.rank}};
  if (!r.gpu.empty()) j["gpu"] = r.gpu;
  if (r.pid >= 0) j["pid"] = r.pid;
  if (!r.host.empty()) j["host"] = r.host;
  if (!r.state.empty()) j["state"] = r.state;
  if (r.ops >= 0) j["ops"] = r.ops;
  return j;
}
json ranks_json(const std::vector<RasRank>& v) {
  json a = json::array();
  for (const auto& r : v) a.push_back(rank_json(r));
  return a;
}
json processes_json(const std::vector<RasProcess>& v) {
  json a = json::array();
  for (const auto& p : v) a.push_back({{"pid", p.pid}, {"host", p.host}, {"gpus", p.gpus}});
  return a;
}
template <typename T>
json opt_int(T v) {
  return v >= 0 ? json(v) : json(nullptr);
}
}  // namespace

json ras_report_to_json(const RasReport& r) {
  json j;
  j["schema"] = kRasSchema;
  j["schema_version"] = kRasSchemaVersion;
  j["source"] = r.source;
  j["format"] = r.format;
  j["complete"] = r.complete;
  j["json_repaired"] = r.json_repaired;
  j["nccl_version"] = r.nccl_version;
  j["cuda_compiled"] = r.cuda_compiled;
  j["cuda_runtime"] = opt_int(r.cuda_runtime);
  j["cuda_driver"] = opt_int(r.cuda_driver);
  j["nodes"] = opt_int(r.nodes);
  j["processes"] = opt_int(r.processes);
  j["gpus"] = opt_int(r.gpus);
  j["collection_seconds"] = r.collection_s >= 0 ? json(r.collection_s) : json(nullptr);
  j["timeouts"] = r.timeouts;
  j["processes_missing"] = r.processes_missing;
  j["missing_processes"] = processes_json(r.missing_processes);
  j["processes_dead"] = r.processes_dead;
  j["dead_processes"] = processes_json(r.dead_processes);
  j["communicators_total"] = opt_int(r.comms_total);
  json groups = json::array();
  for (const auto& g : r.groups)
    groups.push_back({{"group", g.group},
                      {"comms", g.comms},
                      {"nodes", g.nodes},
                      {"ranks_per_node", g.ranks_per_node},
                      {"ranks_per_comm", g.ranks_per_comm},
                      {"ranks_in_group", g.ranks_in_group},
                      {"status", g.status},
                      {"errors", g.errors}});
  j["groups"] = groups;
  json comms = json::array();
  for (const auto& c : r.comms) {
    json m = json::array();
    for (const auto& om : c.op_mismatches) {
      json gs = json::array();
      for (const auto& g : om.groups)
        gs.push_back({{"count", g.count}, {"ranks", g.nranks}, {"listed", ranks_json(g.ranks)}});
      m.push_back({{"op", om.op}, {"groups", gs}, {"max_count", om.max_count()}, {"ranks_behind", om.ranks_behind()}});
    }
    comms.push_back({{"hash", c.hash},
                     {"label", c.label},
                     {"size", opt_int(c.size)},
                     {"ranks_reported", opt_int(c.ranks_reported)},
                     {"missing", c.missing},
                     {"missing_ranks", ranks_json(c.missing_ranks)},
                     {"nocomm", c.nocomm},
                     {"init_errors", c.init_errors},
                     {"async_errors", c.async_errors},
                     {"error_ranks", ranks_json(c.error_ranks)},
                     {"error_counts", c.error_counts},
                     {"status_differs", c.status_differs},
                     {"status_counts", c.status_counts},
                     {"status_ranks", ranks_json(c.status_ranks)},
                     {"op_mismatches", m}});
  }
  j["communicators"] = comms;
  j["warnings"] = r.warnings;
  j["other"] = r.other;
  j["summary"] = ras_summary(r);
  j["findings"] = ras_findings(r);
  return j;
}

}  // namespace fabscope::job
