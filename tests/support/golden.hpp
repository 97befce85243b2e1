#pragma once
// Test support: golden files under tests/golden/. A test renders its output and compares it with
// the committed file; with FABSCOPE_UPDATE_GOLDEN=1 in the environment the file is rewritten
// instead and the test is skipped, so an intended change is one run plus a reviewed diff.
#include <filesystem>
#include <string>

#include "core/json.hpp"

namespace fabscope::testing {

// tests/golden/<rel>
std::filesystem::path golden_file(const std::string& rel);

// Byte-for-byte comparison of text output with tests/golden/<rel>.
void expect_golden_text(const std::string& rel, const std::string& actual);

// Comparison of a JSON value with tests/golden/<rel> (parsed); a difference prints json::diff.
void expect_golden_json(const std::string& rel, const nlohmann::json& actual);

}  // namespace fabscope::testing
