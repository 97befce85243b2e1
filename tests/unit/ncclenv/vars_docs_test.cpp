// The variable table, and docs/ncclenv.md kept equal to it. The docs' table between the
// "ncclenv-vars" markers is generated from known_vars(); after changing the table, rewrite it
// with FABSCOPE_UPDATE_GOLDEN=1 <build>/tests/fabscope_ncclenv_tests --gtest_filter='EnvDocs*'.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "ncclenv/lint.hpp"
#include "ncclenv/vars.hpp"

using namespace fabscope;
using namespace fabscope::ncclenv;

namespace {

const char* kBegin = "<!-- ncclenv-vars:begin (generated from src/ncclenv/vars.cpp by the EnvDocs test) -->\n";
const char* kEnd = "<!-- ncclenv-vars:end -->\n";

std::filesystem::path docs_path() { return std::filesystem::path(FABSCOPE_SOURCE_DIR) / "docs/ncclenv.md"; }

std::string read_docs() {
  std::ifstream in(docs_path(), std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string generated_table() {
  std::ostringstream os;
  os << "| variable | type | default | since | category | meaning |\n|---|---|---|---|---|---|\n";
  for (const auto& v : known_vars()) {
    std::string type = to_string(v.type);
    if (!v.values.empty()) {
      std::string vals(v.values);
      for (auto& c : vals)
        if (c == '|') c = '/';
      type += " (" + vals + ")";
    }
    if (v.min || v.max)
      type += " " + (v.min ? std::to_string(*v.min) : std::string()) + ".." + (v.max ? std::to_string(*v.max) : std::string());
    os << "| `" << v.name << "` | " << type << " | " << (v.default_value.empty() ? "auto/unset" : std::string(v.default_value))
       << " | " << v.since << " | " << to_string(v.category) << " | " << v.meaning << " |\n";
  }
  return os.str();
}

}  // namespace

TEST(EnvVars, TableIsSortedAndUnique) {
  const auto& vars = known_vars();
  ASSERT_GT(vars.size(), 90u);
  for (std::size_t i = 1; i < vars.size(); ++i) EXPECT_LT(vars[i - 1].name, vars[i].name);
}

TEST(EnvVars, EveryEntryIsComplete) {
  for (const auto& v : known_vars()) {
    EXPECT_EQ(v.name.rfind("NCCL_", 0), 0u) << v.name;
    EXPECT_FALSE(v.since.empty()) << v.name;
    EXPECT_FALSE(v.meaning.empty()) << v.name;
    EXPECT_LE(v.meaning.size(), 110u) << v.name << ": one line";
    if (v.type == VarType::Enum) {
      EXPECT_FALSE(v.values.empty()) << v.name;
    }
  }
}

TEST(EnvVars, LookupAndClosestName) {
  ASSERT_NE(find_var("NCCL_IB_HCA"), nullptr);
  EXPECT_EQ(find_var("NCCL_IB_HCAS"), nullptr);
  EXPECT_EQ(closest_var("NCCL_IB_HCAS"), "NCCL_IB_HCA");
  EXPECT_EQ(closest_var("NCCL_SOCKET_IFACE"), "NCCL_SOCKET_IFNAME");
  EXPECT_EQ(closest_var("NCCL_IB_GID_IDX"), "NCCL_IB_GID_INDEX");
  EXPECT_EQ(closest_var("NCCL_IB_HCA"), "");  // known names are not typos
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
}

// The bounded distance agrees with the full one up to its limit and says "over" beyond it, for
// every known name against edited copies of every known name and against random strings.
TEST(EnvVars, BoundedEditDistanceAgreesWithTheFullOne) {
  std::mt19937 rng(7);
  const std::string alphabet = "NCL_IBHAGDSXK";
  auto edit = [&](std::string s, int n) {
    for (int k = 0; k < n; ++k) {
      const std::size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
      switch (rng() % 3) {
        case 0: s.insert(s.begin() + static_cast<long>(at), alphabet[rng() % alphabet.size()]); break;
        case 1: if (at < s.size()) s.erase(at, 1); break;
        default: if (at < s.size()) s[at] = alphabet[rng() % alphabet.size()]; break;
      }
    }
    return s;
  };
  std::size_t compared = 0, within = 0;
  for (const auto& v : known_vars()) {
    for (int n = 0; n <= 6; ++n) {
      const std::string a = edit(std::string(v.name), n);
      const std::string b(known_vars()[rng() % known_vars().size()].name);
      for (const std::string& other : {std::string(v.name), b}) {
        const std::size_t full = edit_distance(a, other);
        for (std::size_t limit : {0u, 1u, 3u, 8u}) {
          const std::size_t got = edit_distance_within(a, other, limit);
          ASSERT_EQ(got, std::min(full, limit + 1)) << a << " vs " << other << " limit " << limit;
          ++compared;
          if (full <= limit) ++within;
        }
      }
    }
  }
  EXPECT_GT(within, compared / 10);  // both sides of the limit were exercised
  EXPECT_LT(within, compared);
  EXPECT_EQ(edit_distance_within(std::string(300, 'a'), std::string(290, 'a') + "b", 3), 0u)
      << "cut at 256 bytes like edit_distance";
}

TEST(EnvDocs, VariableTableMatchesTheCode) {
  std::string docs = read_docs();
  ASSERT_FALSE(docs.empty()) << "missing " << docs_path();
  auto b = docs.find(kBegin);
  auto e = docs.find(kEnd);
  ASSERT_NE(b, std::string::npos) << "docs/ncclenv.md lacks the begin marker";
  ASSERT_NE(e, std::string::npos);
  const std::string want = generated_table();
  const std::string have = docs.substr(b + std::strlen(kBegin), e - b - std::strlen(kBegin));
  if (const char* update = std::getenv("FABSCOPE_UPDATE_GOLDEN"); update && *update && have != want) {
    docs.replace(b + std::strlen(kBegin), have.size(), want);
    std::ofstream(docs_path(), std::ios::binary) << docs;
    GTEST_SKIP() << "rewrote the table in " << docs_path();
  }
  EXPECT_EQ(have, want) << "regenerate with FABSCOPE_UPDATE_GOLDEN=1";
}

TEST(EnvDocs, EveryVariableAppearsInTheDocs) {
  const std::string docs = read_docs();
  for (const auto& v : known_vars())
    EXPECT_NE(docs.find("`" + std::string(v.name) + "`"), std::string::npos) << v.name;
}

TEST(EnvDocs, EveryPlannedVariableIsExplained) {
  const std::string docs = read_docs();
  for (const char* v : {"NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_SOCKET_IFNAME", "NCCL_IB_TC", "NCCL_IB_SL",
                        "NCCL_NET_GDR_LEVEL", "NCCL_IB_TIMEOUT", "NCCL_IB_RETRY_CNT", "NCCL_IB_QPS_PER_CONNECTION",
                        "NCCL_IB_DISABLE", "NCCL_SOCKET_NTHREADS", "NCCL_NSOCKS_PERTHREAD"})
    EXPECT_NE(docs.find("### " + std::string(v)), std::string::npos) << v;
}
