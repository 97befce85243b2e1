#include "support/fixtures.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace fs = std::filesystem;

namespace fabscope::testing {

fs::path fixture(const std::string& name) { return fs::path(FABSCOPE_TEST_FIXTURES) / name; }

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "fabscope-test-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

namespace {
std::string strip_first(const std::string& p) {
  auto slash = p.find('/');
  return slash == std::string::npos ? std::string() : p.substr(slash + 1);
}
}  // namespace

void unpack_ttar(const fs::path& archive, const fs::path& dest) {
  std::ifstream in(archive);
  if (!in) throw std::runtime_error("cannot open ttar archive " + archive.string());
  std::string line;
  std::size_t lineno = 0;
  auto fail = [&](const std::string& why) {
    throw std::runtime_error(archive.string() + ":" + std::to_string(lineno) + ": " + why);
  };
  auto next = [&](std::string& l) {
    if (!std::getline(in, l)) return false;
    ++lineno;
    return true;
  };
  std::string path;
  while (next(line)) {
    if (line.empty() || line.rfind("#", 0) == 0 || line.rfind("Mode:", 0) == 0) continue;
    if (line.rfind("Directory: ", 0) == 0) {
      auto rel = strip_first(line.substr(11));
      fs::create_directories(dest / rel);
    } else if (line.rfind("Path: ", 0) == 0) {
      path = strip_first(line.substr(6));
    } else if (line.rfind("Lines: ", 0) == 0) {
      if (path.empty()) fail("Lines without Path");
      long n = std::strtol(line.c_str() + 7, nullptr, 10);
      if (n < 0 || n > 1000000) fail("bad line count");
      std::string content;
      for (long i = 0; i < n; ++i) {
        std::string l;
        if (!next(l)) fail("archive ends inside " + path);
        std::string out;
        // "NULLBYTE" stands for a NUL byte; a trailing "EOF" means no final newline.
        for (std::size_t pos = 0;;) {
          auto nb = l.find("NULLBYTE", pos);
          if (nb == std::string::npos) { out += l.substr(pos); break; }
          out += l.substr(pos, nb - pos);
          out += '\0';
          pos = nb + 8;
        }
        bool no_eol = i == n - 1 && out.size() >= 3 && out.compare(out.size() - 3, 3, "EOF") == 0;
        if (no_eol) content += out.substr(0, out.size() - 3);
        else content += out + "\n";
      }
      fs::create_directories((dest / path).parent_path());
      std::ofstream(dest / path, std::ios::binary) << content;
      path.clear();
    } else if (line.rfind("SymlinkTo: ", 0) == 0) {
      if (path.empty()) fail("SymlinkTo without Path");
      fs::create_directories((dest / path).parent_path());
      std::error_code ec;
      fs::remove(dest / path, ec);
      fs::create_symlink(line.substr(11), dest / path);
      path.clear();
    } else {
      fail("unexpected line '" + line + "'");
    }
  }
}

void copy_tree(const fs::path& from, const fs::path& to) {
  if (from.extension() == ".ttar") {
    unpack_ttar(from, to);
    return;
  }
  fs::create_directories(to);
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks |
                         fs::copy_options::overwrite_existing);
}

void write_file(const fs::path& dest, const std::string& rel, const std::string& text) {
  fs::create_directories((dest / rel).parent_path());
  std::ofstream out(dest / rel, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + (dest / rel).string());
}

}  // namespace fabscope::testing
