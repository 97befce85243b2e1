#include "probe/port_attrs.hpp"

#include <limits>

#include "core/strings.hpp"
#include "probe/read_util.hpp"
#include "probe/verbs.hpp"

namespace fabscope::probe {

std::optional<CodedState> parse_coded_state(std::string_view text) {
  text = core::trim(text);
  if (text.empty() || text.size() > 64) return std::nullopt;
  CodedState out;
  if (auto colon = text.find(':'); colon != std::string_view::npos) {
    auto code = core::parse_int(text.substr(0, colon));
    if (!code || *code < 0 || *code > 255) return std::nullopt;
    out.code = static_cast<int>(*code);
    text = core::trim(text.substr(colon + 1));
  }
  if (text.empty()) return std::nullopt;
  for (char c : text) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == ' ';
    if (!ok) return std::nullopt;
  }
  out.name = std::string(text);
  return out;
}

// The kernel's names are the ones verbs reports for the same codes (verbs.cpp holds the table).
bool state_name_matches_code(const CodedState& s) {
  if (!s.code) return true;
  const std::string known = verbs_port_state_name(*s.code);
  return known.empty() || s.name == known;
}

bool phys_state_name_matches_code(const CodedState& s) {
  if (!s.code) return true;
  const std::string known = verbs_phys_state_name(*s.code);
  return known.empty() || s.name == known;
}

std::optional<double> parse_rate_gbps(std::string_view text) {
  // Kernel (drivers/infiniband/core/sysfs.c, rate_show): "%d%s Gb/sec (%dX%s)", where %s is
  // ".5" for the 2.5 Gb/s SDR lane rate.
  auto pos = text.find(" Gb/sec");
  if (pos == std::string_view::npos) return std::nullopt;
  auto v = core::parse_double(text.substr(0, pos));
  if (!v || *v < 0 || *v > 1e6) return std::nullopt;
  return v;
}

namespace {

std::optional<CodedState> coded(const std::string& file, std::string_view text, NoteSink& notes,
                                bool (*matches)(const CodedState&), const char* what) {
  if (auto st = parse_coded_state(text); st && matches(*st)) return st;
  notes.add(file, NoteKind::BadValue, std::string("not a ") + what + ": " + quote(text));
  return std::nullopt;
}

}  // namespace

std::optional<CodedState> parse_port_state(const std::string& file, std::string_view text, NoteSink& notes) {
  return coded(file, text, notes, state_name_matches_code, "port state");
}

std::optional<CodedState> parse_phys_state(const std::string& file, std::string_view text, NoteSink& notes) {
  return coded(file, text, notes, phys_state_name_matches_code, "physical state");
}

std::optional<double> parse_rate(const std::string& file, std::string_view text, NoteSink& notes) {
  auto v = parse_rate_gbps(text);
  if (!v) notes.add(file, NoteKind::BadValue, "not a rate: " + quote(text));
  return v;
}

std::optional<std::string> parse_link_layer(const std::string& file, std::string_view text, NoteSink& notes) {
  if (text == "InfiniBand" || text == "Ethernet") return std::string(text);
  notes.add(file, NoteKind::BadValue, "unknown link layer " + quote(text));
  return std::nullopt;
}

std::optional<std::uint64_t> parse_counter(const std::string& file, std::string_view name, std::string_view text,
                                           bool words_to_bytes, NoteSink& notes) {
  auto v = core::parse_u64(text);
  if (!v) {
    notes.add(file, NoteKind::BadValue, "not a number: " + quote(text));
    return std::nullopt;
  }
  if (words_to_bytes && (name == "port_xmit_data" || name == "port_rcv_data")) {
    if (*v > std::numeric_limits<std::uint64_t>::max() / 4) {
      notes.add(file, NoteKind::BadValue, "too large to count in bytes: " + quote(text));
      return std::nullopt;
    }
    *v *= 4;
  }
  return v;
}

}  // namespace fabscope::probe
