#include "nccllog/parser.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "nccllog/signatures.hpp"

namespace fabscope::nccllog {

namespace {

using sv = std::string_view;

// starts() for a literal: the length is a constant, so the compare is a few inlined loads
// rather than a call to memcmp (this runs several times on every line).
template <std::size_t N>
bool starts(sv s, const char (&lit)[N]) {
  return s.size() >= N - 1 && std::memcmp(s.data(), lit, N - 1) == 0;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The first "NCCL " at or after `from`: memchr for the 'N' (rare before the marker, host names
// are lower case) and a 4-byte compare. glibc's memmem for a 5-byte needle was a fifth of the
// time of `fabscope log`.
// `glued` is set when "NCCL" appears glued to other text ("ProcessGroupNCCL.cpp", "WorkNCCL("):
// the mark of a framework line that quotes no NCCL message.
std::size_t find_marker(sv s, std::size_t from, bool& glued) {
  const char* b = s.data();
  const char* e = b + s.size();
  const char* p = b + std::min(from, s.size());
  while (e - p >= 4) {
    p = static_cast<const char*>(std::memchr(p, 'N', static_cast<std::size_t>(e - p) - 3));
    if (p == nullptr) return sv::npos;
    if (std::memcmp(p + 1, "CCL", 3) == 0) {
      if (e - p >= 5 && p[4] == ' ') return static_cast<std::size_t>(p - b);
      glued = true;
    }
    ++p;
  }
  return sv::npos;
}

// Reads a non-negative decimal at s[i], advancing i. Bounded to 18 digits so it cannot
// overflow; false when there is no digit.
bool read_uint(sv s, std::size_t& i, long& out) {
  std::size_t start = i;
  long v = 0;
  while (i < s.size() && is_digit(s[i]) && i - start < 18) v = v * 10 + (s[i++] - '0');
  if (i == start) return false;
  out = v;
  return true;
}

bool read_int(sv s, std::size_t& i, int& out) {
  long v = 0;
  bool neg = i < s.size() && s[i] == '-';
  if (neg) ++i;
  if (!read_uint(s, i, v) || v > 1'000'000'000) return false;
  out = static_cast<int>(neg ? -v : v);
  return true;
}

template <std::size_t N>
bool expect(sv s, std::size_t& i, const char (&lit)[N]) {
  if (!starts(s.substr(std::min(i, s.size())), lit)) return false;
  i += N - 1;
  return true;
}

sv trim(sv s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The int after `key` (" rank ", " nRanks "), or -1.
int field_int(sv s, sv key) {
  std::size_t p = core::find(s, key);
  if (p == sv::npos) return -1;
  std::size_t i = p + key.size();
  int v = -1;
  return read_int(s, i, v) ? v : -1;
}

// The word after `key`, up to a space.
sv field_word(sv s, sv key) {
  std::size_t p = core::find(s, key);
  if (p == sv::npos) return {};
  sv rest = s.substr(p + key.size());
  return rest.substr(0, rest.find(' '));
}

std::uint64_t parse_hex(sv s) {
  if (starts(s, "0x")) s.remove_prefix(2);
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < s.size() && i < 16; ++i) {
    char c = s[i];
    int d = is_digit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (d < 0) break;
    v = v * 16 + static_cast<std::uint64_t>(d);
  }
  return v;
}

// A host name alone, as some launchers and log collectors print the prefix ("gpu-server320 [5]
// NCCL INFO ..."): letters, digits, '-', '.' and '_', starting with a letter.
bool bare_host(sv tok) {
  if (tok.empty() || tok.size() > 64 || !((tok[0] >= 'a' && tok[0] <= 'z') || (tok[0] >= 'A' && tok[0] <= 'Z')))
    return false;
  for (char c : tok)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '-' || c == '.' || c == '_'))
      return false;
  return true;
}

// "host:pid:tid" -> parts; false when the token is not of that shape. A bare host name (no pid, no
// tid) is taken too, with pid and tid -1: its lines are one process per host.
bool split_host_token(sv tok, Line& out) {
  std::size_t c2 = tok.rfind(':');
  if (c2 == sv::npos && bare_host(tok)) {
    out.host = tok;
    out.pid = out.tid = -1;
    return true;
  }
  if (c2 == sv::npos || c2 == 0) return false;
  std::size_t c1 = tok.rfind(':', c2 - 1);
  if (c1 == sv::npos || c1 == 0) return false;
  std::size_t i = c1 + 1;
  long pid = 0, tid = 0;
  if (!read_uint(tok, i, pid) || i != c2) return false;
  i = c2 + 1;
  if (!read_uint(tok, i, tid) || i != tok.size()) return false;
  out.host = tok.substr(0, c1);
  // "[1,0]<stdout>:host" or "2023[1,0]<stdout>:host" (mpirun --tag-output glued to the host).
  // Looked for only when the token starts like such a tag, so the common path stays one branch.
  if (out.host[0] == '[' || is_digit(out.host[0])) {
    std::size_t tag = out.host.find_last_of(">]");
    if (tag != sv::npos && tag + 1 < out.host.size() && out.host[tag + 1] == ':') {
      out.host.remove_prefix(tag + 2);
    } else if (out.host[0] == '[' && tag != sv::npos && tag + 1 < out.host.size()) {
      out.host.remove_prefix(tag + 1);  // "[15]worker-23": an mpirun rank tag glued to the host
    }
  }
  out.pid = pid;
  out.tid = tid;
  return true;
}

bool is_dev_token(sv tok, int& dev) {
  if (tok.size() < 3 || tok.front() != '[' || tok.back() != ']') return false;
  std::size_t i = 1;
  long v = 0;
  if (!read_uint(tok, i, v) || i != tok.size() - 1 || v > 1'000'000) return false;
  dev = static_cast<int>(v);
  return true;
}

// The space-separated token that ends just before `end` (trailing spaces skipped first), and
// where the text left of it ends; false when nothing is left. memrchr: prefixes can be long
// (timestamps, launcher tags) and this runs on every line that carries an event.
bool token_before(const char* begin, const char*& end, sv& tok) {
  while (end > begin && (end[-1] == ' ' || end[-1] == '\t')) --end;
  if (end == begin) return false;
  const void* sp = memrchr(begin, ' ', static_cast<std::size_t>(end - begin));
  const char* b = sp ? static_cast<const char*>(sp) + 1 : begin;
  tok = sv(b, static_cast<std::size_t>(end - b));
  end = b;
  return true;
}

// Parses the text before "NCCL INFO"/"NCCL WARN": "[junk] host:pid:tid [dev] [file:line [(func)]]".
// Reads at most 6 space-separated tokens from the right, and stops at the host token once the
// "[dev]" is found; anything further left (a timestamp, an mpirun "[56]" tag, a terminal colour
// remnant) is never looked at.
void parse_prefix(sv pre, Line& out) {
  const char* begin = pre.data();
  const char* end = begin + pre.size();
  sv first;  // the rightmost token: "file:line" of a WARN, or the end of "(func)"
  for (int k = 0; k < 6; ++k) {
    const char* tok_end = end;
    sv tok;
    if (!token_before(begin, end, tok)) break;
    if (k == 0) first = tok;
    int dev = -1;
    if (!is_dev_token(tok, dev)) continue;
    out.cuda_dev = dev;
    sv host;
    if (token_before(begin, end, host)) split_host_token(host, out);
    if (k > 0) {  // WARN: "file:line" and maybe "(func)" after the device
      const char* b = tok_end;  // where the token right of the device starts
      out.source = sv(b, static_cast<std::size_t>(first.data() + first.size() - b));
    }
    return;
  }
  // No "[dev]": a WARN quoted without its prefix ("misc/ibvwrap.cc:187 NCCL WARN ...").
  if (!first.empty() && first.find(':') != sv::npos) out.source = first;
}

void channel_event(sv m, Event& e) {
  // "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM", "Channel 01 : 2[c7000] -> 0[87000] [receive]
  // via NET/IB/5/GDRDMA" (before 2.12), "Ring 00 : 51[3d000] -> 56[1a000] via P2P/IPC" (2.6).
  std::size_t i = starts(m, "Channel ") ? 8 : 5;
  long ch = 0;
  if (!read_uint(m, i, ch)) return;
  if (i < m.size() && m[i] == '/') {
    ++i;
    long conn = 0;
    if (!read_uint(m, i, conn)) return;
  }
  if (!expect(m, i, " : ")) return;
  int from = -1, to = -1;
  if (!read_int(m, i, from)) return;
  if (i < m.size() && m[i] == '[') {
    std::size_t close = m.find(']', i);
    if (close == sv::npos) return;
    i = close + 1;
  }
  if (!expect(m, i, " -> ")) return;  // "Channel 00/24 : 0 1" lists a ring: not a connection
  if (!read_int(m, i, to)) return;
  std::size_t via = core::find(m, " via ", i);
  if (via == sv::npos) return;
  e.kind = EventKind::Channel;
  e.channel = static_cast<int>(ch);
  e.from = from;
  e.to = to;
  e.name = trim(m.substr(via + 5));
}

void comm_event(sv m, Event& e) {
  // "comm 0x8f2d1c0 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0" and the
  // Init START/COMPLETE lines, with or without the API name in front (it appeared in 2.19).
  std::size_t p = core::find(m, "comm 0x");
  if (p == sv::npos) return;
  sv rest = m.substr(p + 5);
  e.comm_ptr = parse_hex(rest.substr(0, rest.find(' ')));
  e.rank = field_int(m, " rank ");
  if (m.size() >= 13 && m.substr(m.size() - 13) == "Init COMPLETE") {
    e.kind = EventKind::InitComplete;
  } else if (m.size() >= 10 && m.substr(m.size() - 10) == "Init START") {
    e.kind = EventKind::InitStart;
  } else if (core::find(m, " nNodes ") != sv::npos) {
    e.kind = EventKind::CommInfo;
    e.nranks = field_int(m, " nRanks ");
    e.nnodes = field_int(m, " nNodes ");
    e.local_ranks = field_int(m, " localRanks ");
    e.local_rank = field_int(m, " localRank ");
    return;
  } else {
    return;  // another "comm 0x" line
  }
  e.nranks = field_int(m, " nranks ");
  e.comm_id = field_word(m, " commId ");
}

void timings_event(sv m, Event& e) {
  // "Init timings - ncclCommInitRankConfig: rank 1 nranks 2 total 0.52 (...)" (2.27+) or
  // "Init timings: rank 2 nranks 16 total 1.08 (...)" (2.2x).
  e.rank = field_int(m, " rank ");
  e.nranks = field_int(m, " nranks ");
  sv total = field_word(m, " total ");
  if (e.rank < 0 || total.empty()) return;
  std::string buf(total.substr(0, 32));
  char* end = nullptr;
  double v = std::strtod(buf.c_str(), &end);
  if (end == buf.c_str() || v < 0 || v > 1e9) return;
  e.kind = EventKind::InitTimings;
  e.seconds = v;
}

void error_trace_event(sv m, Event& e) {
  // "init.cc:126 -> 5", "proxy.cc:878 -> 6 [Progress Thread]": the ncclResult_t that a
  // failing call returned, printed on the way up the stack.
  std::size_t sp = m.find(' ');
  if (sp == sv::npos || sp == 0 || m.substr(0, sp).find(':') == sv::npos) return;
  std::size_t i = sp;
  if (!expect(m, i, " -> ")) return;
  long code = 0;
  if (!read_uint(m, i, code)) return;
  e.kind = EventKind::ErrorTrace;
  e.number = code;
}

// A decision event: feature `name` on or off, where and why (Event::kind Decision).
void decision(Event& e, sv name, bool on, sv where, sv why) {
  e.kind = EventKind::Decision;
  e.name = name;
  e.number = on ? 1 : 0;
  e.value = where;
  e.detail = why;
}

// "GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)", "GPU Direct RDMA (DMABUF) enabled for
// HCA 0 'mlx5_0'", "GPU Direct RDMA Disabled for GPU 0 / HCA 1 (distance 8 > 5)", "GPU Direct RDMA
// Enabled for GPU 3 / HCA 3 (distance 4 <= 5), read 1 mode Default": `rest` starts after "GPU
// Direct RDMA ".
void gdr_event(sv rest, Event& e) {
  if (starts(rest, "(DMABUF) ")) rest.remove_prefix(9);
  bool on;
  if (starts(rest, "Enabled for ") || starts(rest, "enabled for ")) {
    on = true;
    rest.remove_prefix(12);
  } else if (starts(rest, "Disabled for ") || starts(rest, "disabled for ")) {
    on = false;
    rest.remove_prefix(13);
  } else {
    return;
  }
  std::size_t open = rest.find(" (");
  sv scope = rest.substr(0, open);
  sv why;
  if (open != sv::npos) {
    why = rest.substr(open + 2);
    why = why.substr(0, why.find(')'));
  }
  decision(e, "GDR", on, scope, why);  // the plugin ("NET/IB") is the message's first word when it names one
}

// "16 coll channels, 16 collnet channels, 0 nvls channels, 32 p2p channels, 2 p2p channels per
// peer" (2.17+; 2.2x dropped collnet): NVLS is used when it has channels.
void channel_counts_event(sv m, Event& e) {
  std::size_t p = core::find(m, " nvls channels");
  if (p == sv::npos) return;
  std::size_t b = p;
  while (b > 0 && is_digit(m[b - 1])) --b;
  if (b == p) return;
  decision(e, "NVLS", m.substr(b, p - b) != "0", {}, m.substr(b, p + 14 - b));
}

void info_event(sv m, Event& e) {
  if (m.empty()) return;
  switch (m[0]) {
    case 'C':
      if (starts(m, "Channel ")) { channel_event(m, e); return; }
      if (starts(m, "Connected NVLS")) { e.kind = EventKind::Nvls; return; }
      if (starts(m, "Connected all rings, use ring PXN ")) {  // 2.20+: "... PXN 0 GDR 1"
        std::size_t g = core::find(m, " GDR ");
        if (g != sv::npos && g + 5 < m.size() && is_digit(m[g + 5])) {
          decision(e, "GDR", m[g + 5] != '0', "rings", {});
          return;
        }
      }
      break;
    case 'G':
      if (starts(m, "GPU Direct RDMA ")) { gdr_event(m.substr(16), e); return; }
      break;
    case 'D':
      if (starts(m, "DMA-BUF is available on ")) {  // a check of every init, not a choice to use it
        decision(e, "DMA-BUF", true, trim(m.substr(24)), "checked at every init; not a sign that it is used");
        return;
      }
      break;
    case 'R':
      if (starts(m, "Ring ")) { channel_event(m, e); return; }
      break;
    case 'c':
      if (starts(m, "comm 0x")) { comm_event(m, e); return; }
      if (starts(m, "cudaDriverVersion ")) {
        std::size_t i = 18;
        if (read_uint(m, i, e.number)) e.kind = EventKind::CudaDriver;
        return;
      }
      break;
    case 'n':
      if (starts(m, "nccl") && core::find(m, " comm 0x") != sv::npos) { comm_event(m, e); return; }
      break;
    case 'N':
      if (starts(m, "NCCL version ")) {
        e.kind = EventKind::Version;
        e.name = trim(field_word(m, "NCCL version "));
        return;
      }
      if (starts(m, "NET/IB : Using") || starts(m, "NET/IB: Using")) {
        sv rest = m.substr(m.find("Using") + 5);
        e.kind = EventKind::NetIbUsing;
        e.name = rest.substr(0, rest.find(';'));
        return;
      }
      if (starts(m, "NET/IB : No device found") || starts(m, "NET/IB: No device found")) {
        e.kind = EventKind::IbNoDevice;
        return;
      }
      if (starts(m, "NET : Using interface ")) {  // NCCL 2.3-2.4: the socket transport's interface
        e.kind = EventKind::NetSocketUsing;
        e.name = m.substr(22);
        return;
      }
      if (starts(m, "NET/Socket : Using") || starts(m, "NET/Socket: Using")) {
        e.kind = EventKind::NetSocketUsing;
        e.name = m.substr(m.find("Using") + 5);
        return;
      }
      if (starts(m, "NET/")) {
        // "NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)"
        const std::size_t g = core::find(m, "GPU Direct RDMA ");
        if (g != sv::npos && g < 40) {
          gdr_event(m.substr(g + 16), e);
          if (e.kind != EventKind::None) return;
        }
        // aws-ofi-nccl: "NET/OFI Could not disable CUDA API usage for HMEM, disabling GDR" and
        // "NET/OFI Setting NCCL_PROTO to \"simple\"".
        if (m.ends_with(", disabling GDR")) {
          const sv plugin = m.substr(0, m.find(' '));
          decision(e, "GDR", false, plugin, trim(m.substr(plugin.size(), m.size() - plugin.size() - 15)));
          return;
        }
        const std::size_t st = core::find(m, " Setting NCCL_");
        if (st != sv::npos && st < 40) {
          sv rest = m.substr(st + 9);
          std::size_t to = rest.find(" to ");
          if (to != sv::npos) {
            sv v = trim(rest.substr(to + 4));
            if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
            decision(e, rest.substr(0, to), true, m.substr(0, m.find(' ')), v);
            return;
          }
        }
      }
      if (starts(m, "NVLS multicast support is not available on dev ")) {  // transport/nvls.cc
        decision(e, "NVLS", false, trim(m.substr(43)), "multicast support not available");
        return;
      }
      if (starts(m, "NCCL_")) {
        // "NCCL_IB_HCA set by environment to mlx5" (param.cc appends a '.'), and
        // "NCCL_IB_HCA set to mlx5_4" (net_ib's own echo of string variables).
        std::size_t p = core::find(m, " set by environment to ");
        std::size_t len = 23;
        if (p == sv::npos) { p = core::find(m, " set to "); len = 8; }
        if (p != sv::npos && m.substr(0, p).find(' ') == sv::npos) {
          e.kind = EventKind::EnvOverride;
          e.name = m.substr(0, p);
          sv v = trim(m.substr(p + len));
          if (!v.empty() && v.back() == '.') v.remove_suffix(1);
          e.value = v;
          return;
        }
      }
      break;
    case 'B':
      if (starts(m, "Bootstrap: Using") || starts(m, "Bootstrap : Using")) {
        sv rest = trim(m.substr(m.find("Using") + 5));
        if (starts(rest, "[")) {  // "[0]eth0:10.0.0.1<0> [1]..." (before 2.19)
          std::size_t close = rest.find(']');
          if (close != sv::npos) rest.remove_prefix(close + 1);
        }
        e.kind = EventKind::Bootstrap;
        e.name = rest.substr(0, rest.find(' '));
        return;
      }
      break;
    case 'U':
      if (starts(m, "Using network ")) {
        e.kind = EventKind::UsingNetwork;
        e.name = trim(m.substr(14));
        return;
      }
      if (starts(m, "Using internal Network ")) {  // NCCL 2.3-2.4: "Using internal Network Socket"
        e.kind = EventKind::UsingNetwork;
        e.name = trim(m.substr(23));
        return;
      }
      break;
    case 'F':
      if (starts(m, "Failed to initialize NET plugin ")) {
        e.kind = EventKind::NetPluginFailed;
        e.name = trim(m.substr(32));
        return;
      }
      break;
    case 'I':
      if (starts(m, "Init timings")) { timings_event(m, e); return; }
      break;
    default:
      break;
  }
  if (m[0] >= 'a' && m[0] <= 'z') {
    error_trace_event(m, e);
    if (e.kind != EventKind::None) return;
  }
  if (is_digit(m[0])) {
    channel_counts_event(m, e);
    if (e.kind != EventKind::None) return;
  }
  if (const Signature* s = match_signature(MatchOn::Info, m)) {
    e.kind = EventKind::SignatureHit;
    e.signature = s;
  }
}

}  // namespace

bool scan_line(std::string_view raw, Line& out) {
  // Field by field: `out = Line{}` compiled to a `rep stos` that cost more than the rest.
  out.raw = raw;
  out.host = {};
  out.pid = out.tid = -1;
  out.cuda_dev = -1;
  out.level = Level::Info;
  out.source = {};
  out.message = {};
  out.marker = sv::npos;
  out.prefix_read = false;
  std::size_t from = 0;
  bool glued = false;
  while (true) {
    std::size_t p = find_marker(raw, from, glued);
    if (p == sv::npos) {
      // PyTorch's watchdog: "[rank3]:[E ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught
      // collective operation timeout: WorkNCCL(SeqNum=57, OpType=ALLREDUCE, NumelIn=32, ...)".
      if (glued && raw.find("Watchdog caught collective operation timeout") != sv::npos) {
        out.level = Level::Framework;
        out.message = raw;
        return true;
      }
      return false;
    }
    sv after = raw.substr(p + 5);
    if (starts(after, "INFO ") || starts(after, "WARN ") || after == "INFO" || after == "WARN") {
      out.level = after[0] == 'I' ? Level::Info : Level::Warn;
      out.message = after.size() > 5 ? after.substr(5) : sv{};
      out.marker = p;
      return true;
    }
    if (starts(after, "version ") && p <= 8) {
      // Before 2.2x the version line is printed with no "host:pid:tid" prefix.
      out.level = Level::Bare;
      out.message = trim(raw.substr(p));
      return true;
    }
    if (starts(after, "error") || starts(after, "failure") || starts(after, "communicator") ||
        starts(after, "timeout") || starts(after, "Error")) {
      out.level = Level::Framework;
      out.message = raw;
      return true;
    }
    from = p + 5;
  }
}

void read_prefix(Line& out) {
  if (out.prefix_read || out.marker == sv::npos) return;
  out.prefix_read = true;
  parse_prefix(out.raw.substr(0, out.marker), out);
}

void PrefixMemo::read(Line& out) {
  if (out.prefix_read || out.marker == sv::npos) return;
  const sv pre = out.raw.substr(0, out.marker);
  if (out.level != Level::Info || pre.size() < 16) {
    read_prefix(out);
    return;
  }
  std::uint64_t a, b;
  std::memcpy(&a, pre.data() + pre.size() - 16, 8);
  std::memcpy(&b, pre.data() + pre.size() - 8, 8);
  Slot& slot = slots_[((a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full)) >> 58 & (kSlots - 1)];
  const std::size_t t = slot.tail.size();
  if (t > 0 && pre.size() >= t && std::memcmp(pre.data() + pre.size() - t, slot.tail.data(), t) == 0 &&
      (pre.size() == t || pre[pre.size() - t - 1] == ' ')) {
    out.prefix_read = true;
    out.host = pre.substr(pre.size() - t, slot.host_len);
    out.pid = slot.pid;
    out.tid = slot.tid;
    out.cuda_dev = slot.dev;
    return;
  }
  read_prefix(out);
  // Remembered only when the whole prefix was understood from the host token on: an INFO line
  // with "host:pid:tid [dev]" and nothing after the device (a WARN's "file:line" varies), whose
  // host token starts after a space or at the line's start.
  if (out.host.empty() || out.cuda_dev < 0 || !out.source.empty()) return;
  const char* h = out.host.data();
  if (h < pre.data() || h > pre.data() + pre.size()) return;
  sv tail = pre.substr(static_cast<std::size_t>(h - pre.data()));
  if (tail.size() > 256 || tail.size() < 16 || (h > pre.data() && h[-1] != ' ')) return;
  slot.tail.assign(tail);
  slot.host_len = out.host.size();
  slot.pid = out.pid;
  slot.tid = out.tid;
  slot.dev = out.cuda_dev;
}

bool parse_line(std::string_view raw, Line& out) {
  if (!scan_line(raw, out)) return false;
  read_prefix(out);
  return true;
}

std::optional<double> line_time(const Line& line) {
  // Where to look: before the host token, or the first 40 bytes when the line has no prefix.
  sv raw = line.raw;
  std::size_t end = raw.size() < 40 ? raw.size() : 40;
  if (!line.host.empty() && line.host.data() >= raw.data() && line.host.data() <= raw.data() + raw.size())
    end = static_cast<std::size_t>(line.host.data() - raw.data());
  sv pre = raw.substr(0, end);
  for (std::size_t i = 0; i + 8 <= pre.size(); ++i) {
    // hh:mm:ss
    if (!(is_digit(pre[i]) && is_digit(pre[i + 1]) && pre[i + 2] == ':' && is_digit(pre[i + 3]) &&
          is_digit(pre[i + 4]) && pre[i + 5] == ':' && is_digit(pre[i + 6]) && is_digit(pre[i + 7])))
      continue;
    if (i > 0 && is_digit(pre[i - 1])) continue;
    int h = (pre[i] - '0') * 10 + (pre[i + 1] - '0'), m = (pre[i + 3] - '0') * 10 + (pre[i + 4] - '0');
    int sec = (pre[i + 6] - '0') * 10 + (pre[i + 7] - '0');
    if (h > 23 || m > 59 || sec > 60) continue;
    double t = h * 3600.0 + m * 60.0 + sec;
    std::size_t j = i + 8;
    if (j + 1 < pre.size() && (pre[j] == '.' || pre[j] == ',') && is_digit(pre[j + 1])) {
      double scale = 0.1;
      for (++j; j < pre.size() && is_digit(pre[j]) && scale > 1e-10; ++j, scale /= 10) t += (pre[j] - '0') * scale;
    }
    // A date just before it: "yyyy-mm-dd" and a space or 'T'.
    if (i >= 11 && (pre[i - 1] == ' ' || pre[i - 1] == 'T') && pre[i - 4] == '-' && pre[i - 7] == '-') {
      std::size_t k = i - 11;
      long y = 0, mo = 0, d = 0;
      std::size_t q = k;
      if (read_uint(pre, q, y) && q == k + 4 && expect(pre, q, "-") && read_uint(pre, q, mo) && q == k + 7 &&
          expect(pre, q, "-") && read_uint(pre, q, d) && q == k + 10 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31) {
        // whole days since 1970-01-01 in the proleptic Gregorian calendar
        y -= mo <= 2;
        long era = (y >= 0 ? y : y - 399) / 400;
        long yoe = y - era * 400;
        long doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        t += static_cast<double>(era * 146097 + doe - 719468) * 86400.0;
      }
    }
    return t;
  }
  return std::nullopt;
}

Event classify(const Line& line) {
  Event e;
  switch (line.level) {
    case Level::Info:
      info_event(line.message, e);  // fills e in place: returning it by value copied it twice
      return e;
    case Level::Bare:
      if (starts(line.message, "NCCL version ")) {
        e.kind = EventKind::Version;
        e.name = field_word(line.message, "NCCL version ");
      }
      return e;
    case Level::Warn:
      e.signature = match_signature(MatchOn::Warn, line.message);
      e.kind = e.signature ? EventKind::SignatureHit : EventKind::UnknownWarn;
      if (!e.signature) e.name = line.message;
      return e;
    case Level::Framework:
      e.signature = match_signature(MatchOn::Framework, line.message);
      if (e.signature) e.kind = EventKind::SignatureHit;
      return e;
  }
  return e;
}

LineReader::LineReader(std::size_t max_line_bytes) : max_(max_line_bytes < 16 ? 16 : max_line_bytes) {
  carry_.reserve(max_);
}

void LineReader::emit(std::string_view line, const Callback& on_line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  ++lines_;
  on_line(line);
}

void LineReader::feed(const char* data, std::size_t n, const Callback& on_line) {
  bytes_ += n;
  std::size_t i = 0;
  while (i < n) {
    const char* nl = static_cast<const char*>(std::memchr(data + i, '\n', n - i));
    std::size_t end = nl ? static_cast<std::size_t>(nl - data) : n;
    std::size_t len = end - i;
    if (skipping_) {
      // The tail of an over-long line: dropped up to its newline.
      if (nl) skipping_ = false;
    } else if (carry_.empty() && nl && len <= max_) {
      emit(std::string_view(data + i, len), on_line);  // the common path: no copy
    } else {
      std::size_t room = max_ - carry_.size();
      carry_.append(data + i, std::min(len, room));
      if (len > room) {
        ++cut_;
        emit(carry_, on_line);
        carry_.clear();
        skipping_ = nl == nullptr;
      } else if (nl) {
        emit(carry_, on_line);
        carry_.clear();
      }
    }
    i = nl ? end + 1 : n;
  }
}

void LineReader::finish(const Callback& on_line) {
  if (!carry_.empty()) emit(carry_, on_line);
  carry_.clear();
  skipping_ = false;
}

namespace {

// A regular file is read through read-only mappings of kMapWindow bytes, one at a time: no copy
// from the page cache (read() copying cost about as much as parsing), and memory stays bounded
// because each window is unmapped before the next. Returns the offset reached, or -1 when the
// input cannot be mapped (a pipe, a terminal, a failed mmap), which leaves the stream as it was.
constexpr std::size_t kMapWindow = 8u << 20;

long long map_regular_file(std::FILE* f, LineReader& reader, const LineReader::Callback& on_line) {
  int fd = fileno(f);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  off_t start = lseek(fd, 0, SEEK_CUR);
  if (start < 0 || std::ftell(f) != start) return -1;  // the stream has buffered bytes: don't
  long page = sysconf(_SC_PAGESIZE);
  if (page <= 0) return -1;
  off_t pos = start;
  while (pos < st.st_size) {
    off_t base = pos - pos % page;
    std::size_t len = static_cast<std::size_t>(std::min<off_t>(st.st_size - base, kMapWindow));
    void* m = mmap(nullptr, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, base);
    if (m == MAP_FAILED) return pos == start ? -1 : pos;
    madvise(m, len, MADV_SEQUENTIAL);
    std::size_t skip = static_cast<std::size_t>(pos - base);
    try {
      reader.feed(static_cast<const char*>(m) + skip, len - skip, on_line);
    } catch (...) {
      munmap(m, len);
      throw;
    }
    munmap(m, len);
    pos = base + static_cast<off_t>(len);
  }
  return pos;
}

}  // namespace

void LineReader::read(std::FILE* f, const std::string& name, const Callback& on_line) {
  long long mapped = map_regular_file(f, *this, on_line);
  // What the mappings covered is done; the stream goes on from there (a file that grew while it
  // was read, or one that could not be mapped).
  if (mapped >= 0 && std::fseek(f, static_cast<long>(mapped), SEEK_SET) != 0)
    throw Error(name + ": seek failed: " + std::strerror(errno));
  std::vector<char> buf(1 << 20);
  while (true) {
    std::size_t n = std::fread(buf.data(), 1, buf.size(), f);
    if (n > 0) feed(buf.data(), n, on_line);
    if (n < buf.size()) {
      if (std::ferror(f)) throw Error(name + ": read failed: " + std::strerror(errno));
      break;
    }
  }
  finish(on_line);
}

}  // namespace fabscope::nccllog
