#include "report/html.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>

#include "core/table.hpp"

namespace fabscope::report {

std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string fmt(double v, int decimals) { return core::format_double(v, decimals); }

std::string coord(double v) {
  double r = std::round(v * 10) / 10;
  if (r == std::floor(r)) return fmt(r, 0);
  return fmt(r, 1);
}

std::string count_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string slug(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) o += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '-';
  return o;
}

std::string format_bytes(std::uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  if (v == std::floor(v)) return fmt(v, 0) + " " + units[u];
  return fmt(v, v < 10 ? 2 : 1) + " " + units[u];
}

std::string format_size(std::uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (u < 6 && (bytes >> (10 * (u + 1))) > 0) ++u;
  const std::uint64_t whole = bytes >> (10 * u), rest = bytes - (whole << (10 * u));
  if (rest == 0) return std::to_string(whole) + " " + units[u];
  if (rest < 1024) return std::to_string(whole) + " " + units[u] + " + " + std::to_string(rest) + " B";
  std::string digits = std::to_string(bytes), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out + " B";
}

const char* palette(int i) {
  // Okabe & Ito, "Color Universal Design": distinguishable with the common colour-vision
  // deficiencies. Yellow (#F0E442) is left out: too light on white for thin lines.
  static const char* p[kPaletteSize] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                        "#E69F00", "#56B4E9", "#000000"};
  return p[((i % kPaletteSize) + kPaletteSize) % kPaletteSize];
}

const char* stylesheet() {
  return R"CSS(
:root{--fg:#1a1a1a;--muted:#555;--line:#ccc;--ok:#009E73;--info:#0072B2;--warn:#E69F00;--fail:#D55E00}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);
background:#fff;margin:0 auto;max-width:1100px;padding:12px}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.25em;border-bottom:2px solid var(--fg);margin-top:1.6em}
h3{font-size:1.05em;margin:1.2em 0 .4em}
header p,.muted,figcaption{color:var(--muted)}
nav ul{padding-left:1.2em;margin:.3em 0}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;width:100%;font-size:.92em}
th,td{border:1px solid var(--line);padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f2f2f2}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
code,.mono{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:.9em;overflow-wrap:anywhere}
table.findings a.mono{overflow-wrap:normal}
.sev{font-weight:600;white-space:nowrap}
.sev::before{display:inline-block;width:1.3em;text-align:center;font-weight:700}
.sev-fail{color:var(--fail)}.sev-fail::before{content:"\2716"}
.sev-warn{color:#8a5a00}.sev-warn::before{content:"\25B2"}
.sev-info{color:var(--info)}.sev-info::before{content:"i"}
.sev-ok{color:var(--ok)}.sev-ok::before{content:"\2714"}
figure{margin:1em 0}
svg.plot{width:100%;height:auto;max-width:900px;display:block;font-family:inherit}
svg.plot text{font-size:12px;fill:#333}
svg.heatmap{max-width:100%;height:auto;display:block;font-family:inherit}
svg.heatmap text{fill:#333}svg.heatmap text.slow-node{fill:#000;font-weight:700}
svg.heatmap .cell:hover{stroke:#000;stroke-width:1.5}
svg.topology{width:100%;height:auto;display:block;font-family:inherit}
svg.topology text{fill:#1a1a1a}svg.topology .link:hover{stroke-width:5}
svg.topology .badge text{fill:#fff;font-weight:700}
table.consistency td.odd{background:#fde3cf;font-weight:600}
table.consistency tr.reference{background:#f7f7f7}
table.job-grid td{white-space:nowrap}table.job-grid td.below{background:#fde3cf;font-weight:600}table.job-grid tr.job-median td{background:#f7f7f7}
p.job-missing{border-left:4px solid var(--fail);padding-left:8px}
svg.plot .grid{stroke:#e3e3e3;stroke-width:1}
svg.plot .axis{stroke:#333;stroke-width:1}
svg.plot .limit{stroke-width:1.5;stroke-dasharray:6 4}
svg.plot .pt:hover{stroke:#000;stroke-width:2}
ul.legend{list-style:none;padding:0;margin:.4em 0;display:flex;flex-wrap:wrap;gap:.3em 1.2em;font-size:.9em}
ul.legend svg{vertical-align:middle}
details{margin:.5em 0}summary{cursor:pointer;color:var(--info)}
.verdict-good,.verdict-healthy{color:var(--ok);font-weight:600}
.verdict-fair,.verdict-degraded{color:#8a5a00;font-weight:600}
.verdict-low,.verdict-broken{color:var(--fail);font-weight:600}
p.simulated{font-weight:700;color:#8a5a00;border:2px dashed var(--warn);padding:4px 8px}
footer{margin-top:2em;border-top:1px solid var(--line);color:var(--muted);font-size:.85em}
@media (max-width:600px){body{font-size:14px;padding:6px}th,td{padding:3px 4px}
table.cards thead{display:none}table.cards tr{display:block;border:1px solid var(--line);margin:0 0 .6em}
table.cards td{display:block;border:0;border-bottom:1px dotted var(--line)}
table.cards td::before{content:attr(data-label) ": ";font-weight:600;color:var(--muted);width:auto;display:inline}}
@media print{body{max-width:none;font-size:11pt}nav{display:none}
section{break-inside:auto}figure,tr{break-inside:avoid}a{color:inherit}.scroll{overflow:visible}}
)CSS";
}

}  // namespace fabscope::report
