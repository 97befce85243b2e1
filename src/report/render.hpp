#pragma once
// Report -> one self-contained HTML page: inline CSS and SVG, no script, no external resource,
// so it opens the same offline, on a phone and on paper.
#include <string>
#include <vector>

#include "report/heatmap.hpp"
#include "report/model.hpp"

namespace fabscope::report {

struct Rendered {
  std::string html;
  std::vector<std::string> sections;  // ids of the <section>s written, in page order
};

Rendered render(const Report& r);

// The findings table holds at most this many rows, most severe first; the rest are counted.
inline constexpr std::size_t kMaxFindingRows = 5000;

// Sections, each a <section id="..."> element; empty when the report has nothing for it.
std::string render_summary(const Report& r);
std::string render_findings(const Report& r);
std::string render_bench(const Report& r);  // render_bench.cpp
std::string render_tune(const Report& r);   // render_tune.cpp
std::string render_cluster(const Report& r);  // render_cluster.cpp
std::string render_rdma(const Report& r);     // render_rdma.cpp
std::string render_fabric(const Report& r);   // render_fabric.cpp
std::string render_mesh(const Report& r);     // render_mesh.cpp: every mesh input in one section
std::string render_job(const Report& r);      // render_job.cpp: every job input in one section

// The fabric input a cluster's heat map is ordered by (render_fabric.cpp): the one its
// localization was made on, else the first whose HCAs hold the nodes' LIDs (leaf_groups);
// nullptr, with why, when none does.
const Input* fabric_for_cluster(const Report& r, const cluster::SavedResult& c, std::vector<HeatGroup>* groups,
                                std::string* why);
// A cluster's localization suspects as a table, numbered from first (render_fabric.cpp).
std::string suspects_table(const cluster::SavedResult& c, const std::string& label, int first);
std::string rdma_host(const rdma::Endpoint& e);      // render_rdma.cpp: the name, else the address

// A finding's docs link: docs_url + "docs/checks.md#link-port_down"; without docs_url, under
// default_docs_url().
// Only a relative path into the docs (docs_path_is_linkable) becomes a link: any other string an
// input carries ("javascript:...", "data:...", "https://elsewhere") gives "" and is shown as text.
std::string docs_href(const Report& r, const std::string& docs);
// "docs/checks.md#link-port_down", "docs/rdma.md": a relative path under docs/ to a .md page with
// an optional anchor, of letters, digits and "._-/#" only, without "..".
bool docs_path_is_linkable(const std::string& docs);
// The base of the docs links when --docs-url is not given: the documentation the package installs,
// "file:///usr/share/doc/fabscope/" (its docs/*.md), or what the build set with -DFABSCOPE_DOCS_URL.
std::string default_docs_url();
// --docs-url: empty, or an http(s) URL (or a relative path) of URL-safe characters that ends in '/'.
// Throws UsageError naming the value.
void check_docs_url(const std::string& url);

}  // namespace fabscope::report
