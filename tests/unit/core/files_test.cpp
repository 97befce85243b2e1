#include "core/files.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
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

// A character device named as the output is written in place: a link to /dev/null stands in for
// `-o /dev/null` (as root the old rename replaced the machine's /dev/null with the file).
TEST(WriteOutput, WritesACharacterDeviceInPlaceInsteadOfRenamingOverIt) {
  TempDir t;
  const auto link = t.path() / "null";
  std::filesystem::create_symlink("/dev/null", link);
  core::write_output(link.string(), "report text");
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_TRUE(std::filesystem::is_character_file(link));
  EXPECT_FALSE(std::filesystem::exists(link.string() + ".tmp"));
}

TEST(WriteOutput, WritesAFifoInPlaceToItsReader) {
  TempDir t;
  const std::string fifo = (t.path() / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The reader opens without waiting for a writer, so the write below always finds one.
  int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(rd, 0);
  core::write_output(fifo, "through the pipe");
  char buf[64] = {};
  ssize_t n = ::read(rd, buf, sizeof buf);
  ::close(rd);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0), "through the pipe");
  struct stat st{};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced";
}

TEST(WriteOutput, AFifoNobodyReadsIsAnErrorNotAHang) {
  TempDir t;
  const std::string fifo = (t.path() / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    core::write_output(fifo, "x");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), fifo + ": cannot write: a FIFO that nobody reads");
  }
  struct stat st{};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(WriteOutput, RefusesADirectoryAndASocket) {
  TempDir t;
  const std::string dir = t.path().string();
  const std::string sock = (t.path() / "s.sock").string();
  int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(s, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  ASSERT_LT(sock.size(), sizeof a.sun_path);
  std::memcpy(a.sun_path, sock.c_str(), sock.size() + 1);
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  auto error_of_write = [](const std::string& p) -> std::string {
    try {
      core::write_output(p, "x");
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of_write(dir), dir + ": is a directory, not a file");
  EXPECT_EQ(error_of_write(sock),
            sock + ": cannot write: not a regular file, a FIFO or a character device (a socket); refused");
  ::close(s);
  struct stat st{};
  ASSERT_EQ(::lstat(sock.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
}

// A FIFO (or a link) left at the temporary's name is not opened: it is removed or refused.
TEST(WriteOutput, NeverWritesThroughWhatSitsAtTheTemporaryName) {
  TempDir t;
  const std::string path = (t.path() / "r.html").string();
  write_file(t.path(), "elsewhere", "keep");
  std::filesystem::create_symlink(t.path() / "elsewhere", path + ".tmp");
  core::write_output(path, "new");
  EXPECT_EQ(core::read_input((t.path() / "elsewhere").string(), 1 << 20), "keep");
  EXPECT_EQ(core::read_input(path, 1 << 20), "new");
  ASSERT_EQ(::mkfifo((path + ".tmp").c_str(), 0600), 0);
  EXPECT_THROW(core::write_output(path, "x"), Error);
  EXPECT_EQ(core::read_input(path, 1 << 20), "new");
}

// `-o /dev/stdout` with stdout redirected to a file: /dev/stdout is a link to /proc/self/fd/1,
// whose target is a regular file. A link in the test's directory to /proc/self/fd/N stands in
// for it (the old rename replaced the link itself; as root, the machine's /dev/stdout).
TEST(WriteOutput, WritesThroughALinkToAnOpenDescriptorInsteadOfRenamingOverIt) {
  TempDir t;
  const auto file = t.path() / "redirected";
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "before ", 7), 7);
  const auto link = t.path() / "stdout";
  std::filesystem::create_symlink("/proc/self/fd/" + std::to_string(fd), link);
  core::write_output(link.string(), "archive");
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_FALSE(std::filesystem::exists(link.string() + ".tmp"));
  // Written through the descriptor, at its offset (what `>` and `>>` expect).
  EXPECT_EQ(core::read_input(file.string(), 1 << 20), "before archive");
  EXPECT_EQ(core::named_descriptor(link.string()), fd);
  EXPECT_EQ(core::named_descriptor("/dev/stdout"), 1);
  EXPECT_EQ(core::named_descriptor(file.string()), -1);
  ::close(fd);
}
