#include "core/files.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.hpp"
#include "support/fixtures.hpp"

using namespace fabscope;
using fabscope::testing::TempDir;
using fabscope::testing::write_file;

namespace {

std::string error_of(const std::string& path, std::size_t max_bytes) {
  try {
    core::read_input(path, max_bytes);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ReadInput, ReadsTheWholeFile) {
  TempDir t;
  write_file(t.path(), "a.json", std::string("{\"x\":1}\n\0tail", 14));
  EXPECT_EQ(core::read_input((t.path() / "a.json").string(), 1 << 20), std::string("{\"x\":1}\n\0tail", 14));
}

TEST(ReadInput, EveryFailureNamesThePathFirst) {
  TempDir t;
  write_file(t.path(), "big", std::string((1 << 20) + 1, 'x'));
  const std::string dir = t.path().string(), big = (t.path() / "big").string();
  EXPECT_EQ(error_of(dir, 1 << 20), dir + ": is a directory, not a file");
  EXPECT_EQ(error_of(big, 1 << 20), big + ": larger than 1 MiB; not read");
  EXPECT_EQ(error_of("/nonexistent/x.json", 1 << 20).rfind("/nonexistent/x.json: cannot open: ", 0), 0u);
}

TEST(WriteOutput, ReplacesTheFileWholeAndLeavesNoTemporary) {
  TempDir t;
  const std::string path = (t.path() / "r.html").string();
  write_file(t.path(), "r.html", "old");
  core::write_output(path, "new text");
  EXPECT_EQ(core::read_input(path, 1 << 20), "new text");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  try {
    core::write_output("/nonexistent-dir/r.html", "x");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("/nonexistent-dir/r.html: cannot write: ", 0), 0u) << e.what();
  }
}
