// match_signature skips catalog entries whose byte pairs the message lacks. These tests hold it
// to the plain definition (prefix, both strings, the completion status; first entry in catalog
// order wins) on every WARN and framework line of the shipped logs and on each entry's own words.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "nccllog/parser.hpp"
#include "nccllog/signatures.hpp"
#include "support/fixtures.hpp"

using namespace fabscope::nccllog;

namespace {

// The catalog searched one entry at a time, without any shortcut.
const Signature* plain_match(MatchOn on, std::string_view m) {
  for (const Signature& s : signatures()) {
    if (s.on != on) continue;
    if (!m.starts_with(s.prefix)) continue;
    if (m.find(s.contains) == std::string_view::npos || m.find(s.contains2) == std::string_view::npos) continue;
    if (s.wc_status >= 0) {
      auto st = completion_status(m);
      if (!st || *st != s.wc_status) continue;
    }
    return &s;
  }
  return nullptr;
}

std::string id(const Signature* s) { return s ? s->id : "(none)"; }

}  // namespace

TEST(SignatureFilter, AgreesWithThePlainSearchOnEveryShippedLogLine) {
  namespace fs = std::filesystem;
  int checked = 0, matched = 0;
  for (const auto& entry : fs::recursive_directory_iterator(fabscope::testing::fixture("nccl-logs"))) {
    if (!entry.is_regular_file() || entry.path().extension() != ".log") continue;
    std::ifstream in(entry.path());
    std::string raw;
    while (std::getline(in, raw)) {
      Line l;
      if (!parse_line(raw, l)) continue;
      MatchOn on = l.level == Level::Warn        ? MatchOn::Warn
                   : l.level == Level::Framework ? MatchOn::Framework
                                                 : MatchOn::Info;
      const Signature* want = plain_match(on, l.message);
      const Signature* got = match_signature(on, l.message);
      ++checked;
      matched += want != nullptr;
      EXPECT_EQ(id(got), id(want)) << entry.path().filename().string() << ": " << raw;
    }
  }
  EXPECT_GT(checked, 2000);
  EXPECT_GT(matched, 50);  // the logs do reach the catalog
}

TEST(SignatureFilter, EveryEntryMatchesAMessageMadeOfItsOwnWords) {
  for (const Signature& s : signatures()) {
    std::string m = std::string(s.prefix) + " x " + s.contains + " y " + s.contains2 + " z";
    if (s.wc_status >= 0) m += " status=" + std::to_string(s.wc_status) + " opcode 0";
    const Signature* want = plain_match(s.on, m);
    ASSERT_NE(want, nullptr) << s.id;
    EXPECT_EQ(id(match_signature(s.on, m)), id(want)) << s.id << ": " << m;
  }
}

TEST(SignatureFilter, AMessageThatHasEveryPairButNotTheStringIsNotMatched) {
  // "Got completion" split so that all of its byte pairs occur, never the string itself.
  const std::string m = "NET/IB : Got complet ion... etion comple Got co status=12";
  EXPECT_NE(id(plain_match(MatchOn::Warn, m)), "ib_wc_retry_exceeded");
  EXPECT_EQ(id(match_signature(MatchOn::Warn, m)), id(plain_match(MatchOn::Warn, m)));
}
