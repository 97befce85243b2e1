#pragma once
// Error-counter thresholds in the format of infiniband-diags' ibqueryerrors (its
// --threshold-file, by default /etc/infiniband-diags/error_thresholds): one "CounterName=value"
// per line, '#' starts a comment line, blank lines are skipped; a counter is reported when its
// value is above its threshold, and a counter the file does not name has threshold 0 (any
// non-zero value is reported). Unlike ibqueryerrors, which skips what it does not understand, a
// line that names no counter or has no number is an error naming file:line, so a typo cannot
// silently turn a threshold back to 0.
#include <cstdint>
#include <map>
#include <string>

#include "fabric/model.hpp"

namespace fabscope::fabric {

struct Thresholds {
  std::map<Counter, std::uint64_t> limit;  // as set by the file
  std::uint64_t of(Counter c) const;       // 0 when not set
  bool has(Counter c) const { return limit.count(c) != 0; }
};

// The text of a thresholds file; origin names it in errors ("error_thresholds:3: ...").
Thresholds parse_thresholds(const std::string& text, const std::string& origin);
Thresholds load_thresholds(const std::string& path);

}  // namespace fabscope::fabric
