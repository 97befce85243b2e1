// Files named from outside that a long-running process rereads (the mesh's peers file, its token
// file): only a regular file is read, and whatever else sits at the path is refused at once.
#include "core/regular_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"

namespace fabscope::core {
namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir() : path(std::filesystem::temp_directory_path() / ("fabscope-regular-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

std::string error_of(const std::string& path, std::size_t max = 4096) {
  try {
    read_regular_file(path, max);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(RegularFile, ARegularFileIsReadWhole) {
  TempDir d;
  const auto f = (d.path / "peers").string();
  std::ofstream(f) << "10.0.0.1\n10.0.0.2\n";
  EXPECT_EQ(read_regular_file(f, 4096), "10.0.0.1\n10.0.0.2\n");
}

// open() of a FIFO without O_NONBLOCK waits for a writer: this returns at once (or hangs the test).
TEST(RegularFile, AFifoADirectoryAndADevice_AreRefusedAtOnceNamingWhatTheyAre) {
  TempDir d;
  const auto fifo = (d.path / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_of(fifo), fifo + ": not a regular file (a FIFO); not read");
  EXPECT_EQ(error_of(d.path.string()), d.path.string() + ": not a regular file (a directory); not read");
  EXPECT_EQ(error_of("/dev/null"), "/dev/null: not a regular file (a character device); not read");
  EXPECT_NE(error_of((d.path / "absent").string()).find(": cannot open: "), std::string::npos);
}

TEST(RegularFile, LargerThanTheBound_IsRefused) {
  TempDir d;
  const auto f = (d.path / "big").string();
  std::ofstream(f) << std::string(5000, 'x');
  EXPECT_EQ(error_of(f, 4096), f + ": larger than 4096 bytes; not read");
}

}  // namespace
}  // namespace fabscope::core
