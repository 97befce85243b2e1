// fabscope capture as a user runs it: the archive written to standard output.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "support/cli_run.hpp"
#include "support/fixtures.hpp"

using fabscope::testing::quote;
using fabscope::testing::run_fabscope;

namespace {
std::string rxe_fixture() { return fabscope::testing::fixture("rxe-vm").string(); }
std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
}  // namespace

// Into a pipe: what the reader gets is the gzip stream alone (the text summary once followed it
// into the pipe, and gzip -t saw trailing garbage); the summary goes to standard error.
TEST(CaptureCli, ToStdoutIntoAPipeWritesTheArchiveAlone) {
  fabscope::testing::TempDir t;
  const std::string out = (t.path() / "piped.tar.gz").string(), err = (t.path() / "err").string();
  auto r = run_fabscope("capture --root " + quote(rxe_fixture()) + " -o /dev/stdout 2>" + quote(err) + " | cat > " + quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(std::system(("gzip -t " + quote(out)).c_str()), 0);
  EXPECT_EQ(std::system(("tar -tzf " + quote(out) + " >/dev/null").c_str()), 0);
  EXPECT_EQ(contents(out).find("Unpack: tar xzf"), std::string::npos);
  EXPECT_NE(contents(err).find("wrote /dev/stdout"), std::string::npos) << contents(err);
}

// Into a file through a link to the descriptor (what /dev/stdout is with `> file`): the link stays
// a link and the file holds the archive alone.
TEST(CaptureCli, ToALinkOfStdoutRedirectedToAFileKeepsTheLink) {
  fabscope::testing::TempDir t;
  const auto link = t.path() / "stdout-link";
  std::filesystem::create_symlink("/proc/self/fd/1", link);
  const std::string out = (t.path() / "redirected.tar.gz").string();
  const std::string err = (t.path() / "err").string();
  auto r = run_fabscope("capture --root " + quote(rxe_fixture()) + " -o " + quote(link.string()) + " > " + quote(out) + " 2> " +
                        quote(err) + " && true");
  ASSERT_EQ(r.exit_code, 0) << r.out << contents(err);
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(std::system(("gzip -t " + quote(out)).c_str()), 0);
  EXPECT_EQ(contents(out).find("Unpack: tar xzf"), std::string::npos);
  EXPECT_NE(contents(err).find("wrote "), std::string::npos) << contents(err);  // the summary, on stderr
}
