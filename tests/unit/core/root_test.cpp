#include "core/root.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "core/error.hpp"
#include "support/fixtures.hpp"

using fabscope::core::Root;
using fabscope::testing::TempDir;
using fabscope::testing::write_file;

TEST(Root, NonExistentDirectoryIsAClearError) {
  try {
    Root r("/nonexistent/fabscope-root");
    FAIL() << "expected an error";
  } catch (const fabscope::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/fabscope-root"), std::string::npos);
  }
}

TEST(Root, ReadLineTrimsAndRejectsGarbage) {
  TempDir t;
  write_file(t.path(), "sys/a", "  4: ACTIVE \n");
  write_file(t.path(), "sys/nul", std::string("12\0junk", 7));
  write_file(t.path(), "sys/empty", "");
  Root r(t.path());
  EXPECT_EQ(r.read_line("sys/a").value(), "4: ACTIVE");
  EXPECT_EQ(r.read_line("/sys/a").value(), "4: ACTIVE");
  EXPECT_FALSE(r.read_line("sys/nul"));
  EXPECT_FALSE(r.read_line("sys/empty"));
  EXPECT_FALSE(r.read_line("sys/missing"));
}

TEST(Root, ReadIntParsesDecimalAndHexOnly) {
  TempDir t;
  write_file(t.path(), "n", "4096\n");
  write_file(t.path(), "h", "0x030200\n");
  write_file(t.path(), "na", "N/A\n");
  write_file(t.path(), "neg", "-1\n");
  write_file(t.path(), "huge", "99999999999999999999999\n");
  Root r(t.path());
  EXPECT_EQ(r.read_int("n").value(), 4096);
  EXPECT_EQ(r.read_int("h").value(), 0x030200);
  EXPECT_FALSE(r.read_int("na"));
  EXPECT_EQ(r.read_int("neg").value(), -1);
  EXPECT_FALSE(r.read_int("huge"));
  EXPECT_FALSE(r.read_u64("neg"));
}

TEST(Root, ReadIsBounded) {
  TempDir t;
  write_file(t.path(), "big", std::string(100000, 'x'));
  Root r(t.path());
  EXPECT_EQ(r.read("big", 100)->size(), 100u);
}

TEST(Root, ResolveStaysInsideRoot) {
  TempDir t;
  write_file(t.path(), "sys/devices/pci0000:00/0000:00:01.0/vendor", "0x10de\n");
  std::filesystem::create_directories(t.path() / "sys/bus/pci/devices");
  std::filesystem::create_symlink("../../../devices/pci0000:00/0000:00:01.0",
                                  t.path() / "sys/bus/pci/devices/0000:00:01.0");
  Root r(t.path());
  EXPECT_EQ(r.resolve("sys/bus/pci/devices/0000:00:01.0").value(),
            "sys/devices/pci0000:00/0000:00:01.0");
  EXPECT_EQ(r.read_line("sys/bus/pci/devices/0000:00:01.0/vendor").value(), "0x10de");
  EXPECT_EQ(r.list("sys/bus/pci/devices"), std::vector<std::string>{"0000:00:01.0"});
}

// A FIFO planted in a captured tree blocks an ordinary open until a writer comes: read refuses
// anything but a regular file without opening it for a wait.
TEST(Root, ReadRefusesAFifoWithoutWaiting) {
  TempDir t;
  std::filesystem::create_directories(t.path() / "sys");
  ASSERT_EQ(::mkfifo((t.path() / "sys/state").c_str(), 0600), 0);
  std::filesystem::create_symlink("/dev/null", t.path() / "sys/dev");
  Root r(t.path());
  EXPECT_FALSE(r.read("sys/state"));
  EXPECT_FALSE(r.read_line("sys/state"));
  EXPECT_FALSE(r.read("sys/dev"));
  EXPECT_TRUE(r.exists("sys/state"));
}

// A captured tree is read as if it were "/": a link out of it does not read the host's file,
// nor does a sibling directory whose name starts with the root's.
TEST(Root, ReadDoesNotFollowLinksOutOfTheRoot) {
  TempDir t;
  write_file(t.path(), "tree/etc/inside.conf", "NCCL_A=1\n");
  write_file(t.path(), "tree-evil/etc/nccl.conf", "NCCL_B=1\n");
  write_file(t.path(), "host.conf", "NCCL_C=1\n");
  std::filesystem::create_symlink(t.path() / "host.conf", t.path() / "tree/etc/nccl.conf");
  std::filesystem::create_symlink("../../tree-evil/etc/nccl.conf", t.path() / "tree/etc/sibling.conf");
  std::filesystem::create_symlink("inside.conf", t.path() / "tree/etc/local.conf");
  Root r(t.path() / "tree");
  EXPECT_FALSE(r.read("etc/nccl.conf"));
  EXPECT_FALSE(r.read("/etc/sibling.conf"));
  EXPECT_FALSE(r.resolve("etc/sibling.conf"));
  EXPECT_EQ(r.read("etc/local.conf").value(), "NCCL_A=1\n");
}

// A capture archive given as --root: say it is an archive and how to unpack it; a file that is no
// archive: not a directory; nothing there: does not exist.
TEST(Root, AnArchiveOrAFileIsNamedForWhatItIs) {
  TempDir t;
  write_file(t.path(), "node7.tar.gz", "not really gzip");
  write_file(t.path(), "plain.txt", "x");
  auto message = [](const std::filesystem::path& p) -> std::string {
    try {
      Root r(p);
    } catch (const fabscope::Error& e) {
      return e.what();
    }
    return "";
  };
  const std::string archive = message(t.path() / "node7.tar.gz");
  EXPECT_NE(archive.find("is an archive"), std::string::npos) << archive;
  EXPECT_NE(archive.find("tar -xzf"), std::string::npos) << archive;
  EXPECT_NE(archive.find("--root /tmp/node7)"), std::string::npos) << archive;
  const std::string plain = message(t.path() / "plain.txt");
  EXPECT_NE(plain.find("is not a directory"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("archive"), std::string::npos) << plain;
  EXPECT_NE(message(t.path() / "gone").find("does not exist"), std::string::npos);
}

TEST(Root, FromOptionPrefersFlagOverEnvironment) {
  TempDir t;
  setenv("FABSCOPE_ROOT", "/nonexistent-env-root", 1);
  EXPECT_EQ(Root::from_option(t.path().string()).dir(), std::filesystem::canonical(t.path()));
  EXPECT_THROW(Root::from_option(""), fabscope::Error);
  unsetenv("FABSCOPE_ROOT");
  EXPECT_TRUE(Root::from_option("").is_live());
}

TEST(Parse, SplitAndTrim) {
  using namespace fabscope::core;
  EXPECT_EQ(split("a,,b", ','), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(split("a,,b", ',', false), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(split_ws("  x \t y\n"), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(trim("\t a \n"), "a");
  EXPECT_FALSE(parse_double("1.5x"));
  EXPECT_DOUBLE_EQ(parse_double(" 2.5 ").value(), 2.5);
}
