#pragma once
// Helpers shared by the probe tests.
#include <string>
#include <vector>

namespace fabscope::testing {

inline bool has_note_containing(const std::vector<std::string>& notes, const std::string& text) {
  for (const auto& n : notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace fabscope::testing
