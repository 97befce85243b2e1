#pragma once
// The one table of NCCL environment variables fabscope knows. Planning, linting and
// docs/ncclenv.md all read it (a unit test keeps the docs' table equal to it).
//
// Names, defaults and first versions come from NCCL's environment-variable documentation
// (env.rst, "since 2.x" notes) and its NCCL_PARAM declarations; the meanings are ours.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabscope::ncclenv {

enum class VarType { Int, Bool, String, Enum, Size, List };

// NCCL's documentation keeps "system configuration" variables (safe to keep in scripts and
// nccl.conf) apart from "debugging" ones. We split the latter in two: tuning knobs a site may
// set on purpose with evidence (channels, QPs, GDR level), and debug-only switches that force
// or disable behaviour and should not stay set in production (NCCL_ALGO, NCCL_P2P_DISABLE).
enum class Category { System, Tuning, Debug };

struct VarInfo {
  std::string_view name;           // "NCCL_IB_HCA"
  VarType type = VarType::String;
  std::string_view default_value;  // as NCCL documents it; "" means unset / chosen at run time
  std::string_view since;          // first NCCL version that reads it: "2.1.4"; "2.0" for the oldest
  Category category = Category::System;
  std::string_view meaning;        // one line, our words
  std::string_view values = {};    // Enum: accepted values, '|' separated ("VERSION|WARN|INFO|TRACE")
  std::optional<std::int64_t> min = {};  // Int: accepted range, where NCCL enforces or hardware bounds it
  std::optional<std::int64_t> max = {};
};

const char* to_string(VarType t);
const char* to_string(Category c);

// Every variable, sorted by name.
const std::vector<VarInfo>& known_vars();
const VarInfo* find_var(std::string_view name);

// Levenshtein distance (insert, delete, substitute: cost 1). Inputs are cut at 256 bytes.
std::size_t edit_distance(std::string_view a, std::string_view b);

// edit_distance(a, b) when it is at most `limit`, else limit + 1. Stops as soon as the answer is
// known to exceed the limit (a length difference beyond it, or a row whose every cell does), so
// comparing one name with every known name costs little when most are far apart.
std::size_t edit_distance_within(std::string_view a, std::string_view b, std::size_t limit);

// The known name closest to `name` by edit distance, when close enough to be a typo
// (at most 3 edits, and less than half the name); "" otherwise.
std::string closest_var(std::string_view name);
// The same among the given variables (lint judges against the list it was given).
std::string closest_var(std::string_view name, const std::vector<VarInfo>& vars);

}  // namespace fabscope::ncclenv
