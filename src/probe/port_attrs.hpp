#pragma once
// One parser per sysfs fact of an RDMA port (sys/class/infiniband/<dev>/ports/<n>/...). The
// probe's walk (rdma.cpp) and the exporter's per-scrape re-reads (exporter/port_reader.cpp) both
// call these, so a value is accepted, converted and noted the same way whichever reads it.
//
// Each parse_* takes the file (relative to the root, for the note) and its first line; it returns
// the value, or nullopt after adding one note of kind bad_value to notes. The pure helpers below
// them are what they are built from.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "probe/note.hpp"

namespace fabscope::probe {

// "4: ACTIVE" -> {4, "ACTIVE"}; "LinkUp" (no code) -> {nullopt, "LinkUp"}.
struct CodedState {
  std::optional<int> code;
  std::string name;
};

// ports/<n>/state. Note: "not a port state: '<text>'".
std::optional<CodedState> parse_port_state(const std::string& file, std::string_view text, NoteSink& notes);
// ports/<n>/phys_state. Note: "not a physical state: '<text>'".
std::optional<CodedState> parse_phys_state(const std::string& file, std::string_view text, NoteSink& notes);
// ports/<n>/rate, in Gb/s. Note: "not a rate: '<text>'".
std::optional<double> parse_rate(const std::string& file, std::string_view text, NoteSink& notes);
// ports/<n>/link_layer: "InfiniBand" or "Ethernet". Note: "unknown link layer '<text>'".
std::optional<std::string> parse_link_layer(const std::string& file, std::string_view text, NoteSink& notes);
// One file of ports/<n>/counters (words_to_bytes) or hw_counters. counters/port_xmit_data and
// port_rcv_data count 4-byte words (IBA PortCounters, "divided by 4"); the kernel passes them
// through unscaled, so with words_to_bytes they come back in bytes. Notes: "not a number:
// '<text>'" (mlx4 and some VFs write "N/A (no PMA)" for counters the port cannot report), "too
// large to count in bytes: '<text>'".
std::optional<std::uint64_t> parse_counter(const std::string& file, std::string_view name, std::string_view text,
                                           bool words_to_bytes, NoteSink& notes);

// The pure parts. parse_coded_state: nullopt on garbage (no name, a code outside 0-255, bytes
// other than letters, digits, '_' and ' ').
std::optional<CodedState> parse_coded_state(std::string_view text);
// The names the kernel writes for each code (drivers/infiniband/core/sysfs.c: state_show and
// phys_state_to_str). A known code with another name is garbage (a truncated or corrupt read);
// an unknown code is taken as written, for states newer than this table.
bool state_name_matches_code(const CodedState& s);
bool phys_state_name_matches_code(const CodedState& s);
// "100 Gb/sec (4X EDR)" -> 100.0; "2.5 Gb/sec (1X SDR)" -> 2.5. nullopt when not of that form.
std::optional<double> parse_rate_gbps(std::string_view text);

}  // namespace fabscope::probe
