// Saved files stay readable (../shared/DESIGN.md, docs/formats.md): every JSON document shipped
// under tests/fixtures that has a "schema" key is read back by the reader fabscope itself uses
// for that schema, every time the tests run. A fixture is a file an earlier fabscope wrote, so
// this is where a field made mandatory after a file was saved shows up (`cluster --from` of a
// 0.1.0 result failed with "nodes[0].rdma_address: missing").
//
// The rules below name, per schema, the readers of the product. A document of a schema without a
// rule fails, so a new schema (or a new fixture of one) has to say here how fabscope reads it
// back; and every schema docs/formats.md lists needs a rule, so a new schema cannot be documented
// without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cluster/saved.hpp"
#include "cluster/summary.hpp"
#include "core/error.hpp"
#include "core/json.hpp"
#include "core/root.hpp"
#include "job/analysis.hpp"
#include "probe/replay.hpp"
#include "probe/saved.hpp"
#include "rdma/types.hpp"
#include "report/load.hpp"
#include "fabric/model.hpp"
#include "support/fixtures.hpp"
#include "tune/saved_result.hpp"

namespace fabscope {
namespace {

namespace fs = std::filesystem;

struct Document {
  fs::path file;   // the fixture
  int line = 0;    // JSON Lines: the line (from 1); 0 for a whole-file document
  json doc;
  std::string schema;
};

// Each reader of a schema, by the command that uses it. A reader throws (fabscope::Error, or a
// test failure) when the document cannot be read.
using Reader = std::function<void(const Document&)>;
struct Rule {
  std::string schema;
  std::vector<std::pair<std::string, Reader>> readers;  // empty: fabscope writes it, never reads it
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// report: the document alone (a JSON Lines line is read as the one document it is).
void through_report(const Document& d) {
  const report::Input in = report::input_from_json(d.file.string(), d.doc);
  EXPECT_EQ(in.schema, d.schema);
}

const std::vector<Rule>& rules() {
  static const std::vector<Rule> r = {
      {"fabscope.node",
       {{"check --node (probe::load_saved_node)",
         [](const Document& d) {
           ASSERT_EQ(d.line, 0);
           const NodeInfo n = probe::load_saved_node(d.file.string());
           EXPECT_FALSE(n.hostname.empty() && n.rdma_devices.empty() && n.netdevs.empty()) << "read as empty";
         }},
        {"doctor --root CAPTURE: fabscope/probe.json (NodeInfo from_json)",
         [](const Document& d) { (void)d.doc.get<NodeInfo>(); }}}},
      {"fabscope.check", {{"report", through_report}}},
      {"fabscope.doctor", {{"report", through_report}}},
      {"fabscope.bench", {{"report", through_report}}},
      {"fabscope.rdma",
       {{"rdma (rdma::result_from_json)",
         [](const Document& d) {
           const rdma::Result r = rdma::result_from_json(d.file.string(), d.doc);
           EXPECT_EQ(r.sizes.size(), d.doc.at("sizes").size());
         }},
        {"report", through_report}}},
      {"fabscope.metrics", {{"report (--mesh, --job)", through_report}}},
      {"fabscope.tune",
       {{"tune --launch, report (tune::saved_result_from_json)",
         [](const Document& d) {
           const tune::SavedResult t = tune::saved_result_from_json(d.file.string(), d.doc);
           EXPECT_FALSE(t.run.collectives.empty());
           EXPECT_EQ(t.table.size(), d.doc.at("table").size());
         }},
        {"report", through_report}}},
      {"fabscope.cluster",
       {{"cluster --from (cluster::saved_run_from_json, localize_saved)",
         [](const Document& d) {
           const cluster::SavedRun run = cluster::saved_run_from_json(d.doc);
           EXPECT_EQ(run.nodes.size(), d.doc.at("nodes").size());
           // Every pair the file measured with the judged engine is read as that engine's.
           std::size_t judged = 0;
           for (const auto& p : d.doc.at("pairwise").at("pairs"))
             judged += p.value("engine", d.doc.at("pairwise").at("engine").get<std::string>()) ==
                       d.doc.at("pairwise").at("engine").get<std::string>();
           EXPECT_EQ(run.pairs.size(), judged);
           (void)cluster::localize_saved(run);
         }},
        {"report", through_report}}},
      {"fabscope.job-records",
       {{"job --from, job --nodes (job::snapshot_from_json)",
         [](const Document& d) {
           const job::Snapshot s = job::snapshot_from_json(d.doc, d.file.string());
           EXPECT_EQ(s.ranks.size(), d.doc.at("ranks").size());
           (void)job::analyze(s);
         }}}},
      {"fabscope.job", {}},
      {"fabscope.job-ras", {}},
      {"fabscope.cluster.node",
       {{"cluster rank 0 (cluster::summary_from_json)",
         [](const Document& d) { (void)cluster::summary_from_json(d.doc); }}}},
      {"fabscope.fabric",
       {{"fabric --from, --expect; cluster --fabric (fabric::load_subnet)",
         [](const Document& d) {
           ASSERT_EQ(d.line, 0);
           const fabric::Subnet s = fabric::load_subnet(d.file.string());
           EXPECT_FALSE(s.nodes.empty());
         }},
        {"report", through_report}}},
      {"fabscope.capture",
       {{"probe under --root (probe::load_capture_replay)",
         [](const Document& d) {
           // The replay reads <root>/fabscope/manifest.json (and what it names, relative to root).
           testing::TempDir tmp;
           fs::path root = d.file.parent_path().parent_path();
           if (d.file.filename() != "manifest.json" || d.file.parent_path().filename() != "fabscope") {
             root = tmp.path();
             testing::write_file(root, probe::kCaptureManifest, read_text(d.file));
           }
           std::vector<std::string> notes;
           auto replay = probe::load_capture_replay(core::Root(root), notes);
           ASSERT_TRUE(replay.has_value());
           for (const auto& n : notes) ADD_FAILURE() << "replay note: " << n;
           EXPECT_EQ(replay->live, d.doc.value("live", false));
         }}}},
      // Written, never read back by fabscope.
      {"fabscope.env", {}},
      {"fabscope.envlint", {}},
      {"fabscope.nccllog", {}},
      {"fabscope.report", {}},
      {"fabscope.capture.summary", {}},
      {"fabscope.cluster.localization", {}},
      {"fabscope.fabric.route", {}},
      {"fabscope.version", {}},
  };
  return r;
}

const Rule* rule_for(const std::string& schema) {
  for (const auto& r : rules())
    if (r.schema == schema) return &r;
  return nullptr;
}

// Every JSON document with a "schema" key under tests/fixtures: whole files, and the lines of a
// JSON Lines file (`rdma --server --sessions N --json`) when each of its lines is one.
std::vector<Document> shipped_documents() {
  std::vector<Document> out;
  const fs::path top = testing::fixture("");
  for (auto it = fs::recursive_directory_iterator(top); it != fs::recursive_directory_iterator(); ++it) {
    if (!it->is_regular_file() || it->is_symlink() || it->file_size() > (64u << 20)) continue;
    const std::string text = read_text(it->path());
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || text[first] != '{') continue;
    json doc = json::parse(text, nullptr, false);
    if (!doc.is_discarded()) {
      if (doc.is_object() && doc.contains("schema") && doc["schema"].is_string())
        out.push_back({it->path(), 0, doc, doc["schema"].get<std::string>()});
      continue;
    }
    std::vector<Document> lines;
    std::istringstream in(text);
    std::string line;
    bool all = true;
    for (int no = 1; std::getline(in, line); ++no) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      json l = json::parse(line, nullptr, false);
      if (l.is_discarded() || !l.is_object() || !l.contains("schema") || !l["schema"].is_string()) {
        all = false;
        break;
      }
      lines.push_back({it->path(), no, l, l["schema"].get<std::string>()});
    }
    if (all) out.insert(out.end(), lines.begin(), lines.end());
  }
  std::sort(out.begin(), out.end(), [](const Document& a, const Document& b) {
    return std::tie(a.file, a.line) < std::tie(b.file, b.line);
  });
  return out;
}

std::string name_of(const Document& d) {
  std::string s = fs::relative(d.file, testing::fixture("")).string();
  if (d.line) s += ":" + std::to_string(d.line);
  return s;
}

TEST(SavedFiles, EveryShippedFixtureIsReadBackByEachReaderOfItsSchema) {
  const auto docs = shipped_documents();
  // The walk found the fixtures (a wrong path would pass with nothing read).
  ASSERT_GE(docs.size(), 14u);
  std::map<std::string, int> per_schema;
  for (const auto& d : docs) {
    SCOPED_TRACE(name_of(d) + " (" + d.schema + ")");
    const Rule* r = rule_for(d.schema);
    if (!r) {
      ADD_FAILURE() << name_of(d) << ": schema \"" << d.schema
                    << "\" has no rule in tests/unit/saved_files/reread_test.cpp: add the readers fabscope uses for it";
      continue;
    }
    ++per_schema[d.schema];
    for (const auto& [what, read] : r->readers) {
      SCOPED_TRACE(what);
      try {
        read(d);
      } catch (const std::exception& e) {
        ADD_FAILURE() << name_of(d) << " is not read back by " << what << ": " << e.what();
      }
    }
  }
  std::string seen;
  for (const auto& [s, n] : per_schema) seen += " " + s + "=" + std::to_string(n);
  std::cout << "[ saved files ] documents read back per schema:" << seen << "\n";
}

// A schema documented in docs/formats.md's table has a rule here (readers, or none: written only).
TEST(SavedFiles, EverySchemaOfTheFormatsPageHasARule) {
  const std::string page = read_text(fs::path(FABSCOPE_SOURCE_DIR) / "docs/formats.md");
  const std::regex row(R"(\n\| `(fabscope\.[a-z.]+)` \|)");
  std::set<std::string> documented;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), row); it != std::sregex_iterator(); ++it)
    documented.insert((*it)[1].str());
  ASSERT_GE(documented.size(), 15u) << "the table of docs/formats.md was not found";
  for (const auto& s : documented) EXPECT_NE(rule_for(s), nullptr) << s << " is documented but has no rule here";
}

// The rules cannot pass by reading nothing: a document of each kind that its reader refuses
// fails the walk's check (here: a fabscope.cluster whose nodes[0].name is a number).
TEST(SavedFiles, AReaderRefusingADocument_IsAFailure) {
  Document d;
  d.file = testing::fixture("cluster-runs/vm5-slow-node.json");
  d.doc = json::parse(read_text(d.file));
  d.schema = "fabscope.cluster";
  d.doc["nodes"][0]["name"] = 7;
  EXPECT_THROW(rule_for("fabscope.cluster")->readers.at(0).second(d), Error);
}

}  // namespace
}  // namespace fabscope
