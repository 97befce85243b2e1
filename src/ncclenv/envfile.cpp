#include "ncclenv/envfile.hpp"

#include "core/root.hpp"

namespace fabscope::ncclenv {

namespace {

Finding syntax(const std::string& where, std::string message, std::string evidence, std::string remedy) {
  Finding f;
  f.id = "env.syntax";
  f.severity = Severity::Warn;
  f.subject = where;
  f.message = where + ": " + message;
  f.evidence = std::move(evidence);
  f.remedy = std::move(remedy);
  f.docs = docs_anchor(f.id, "docs/ncclenv.md");
  return f;
}

// Evidence shows the line as read, printable ASCII only and bounded, so binary junk or a huge
// line cannot flood the report.
std::string shown(std::string_view line) {
  std::string out = "line: '";
  std::size_t n = 0;
  for (char c : line) {
    if (++n > 80) {
      out += "...";
      break;
    }
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) out += c;
    else {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  return out + "' (" + std::to_string(line.size()) + " bytes)";
}

bool has_control(std::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\t') return true;
    if (u == 0x7f) return true;
  }
  return false;
}

}  // namespace

bool valid_name(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

ParsedFile parse_env_text(std::string_view text, const std::string& source, Dialect dialect) {
  ParsedFile out;
  std::size_t dropped = 0;
  auto report = [&](Finding f) {
    if (out.findings.size() < kMaxSyntaxFindings) out.findings.push_back(std::move(f));
    else ++dropped;
  };
  const bool conf = dialect == Dialect::NcclConf;
  const std::string consumer = conf ? "NCCL" : "docker --env-file";
  int lineno = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(pos, end - pos);
    pos = end + 1;
    ++lineno;
    const std::string where = source + ":" + std::to_string(lineno);
    if (raw.size() > kMaxLineBytes) {
      report(syntax(where, "line of " + std::to_string(raw.size()) + " bytes, cut at " +
                               std::to_string(kMaxLineBytes),
                    shown(raw), "keep one short KEY=VALUE per line"));
      raw = raw.substr(0, kMaxLineBytes);
    }
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);  // CRLF: both NCCL (2.19+) and docker drop it
    std::string_view line = core::trim(raw);
    if (line.empty() || line.front() == '#') continue;
    const auto raw_eq = raw.find('=');
    auto blank = [](char c) { return c == ' ' || c == '\t'; };
    if (conf && raw_eq != std::string_view::npos && raw_eq > 0 && (blank(raw.front()) || blank(raw[raw_eq - 1]))) {
      report(syntax(where, "blanks around the name: NCCL reads them as part of it, so this line sets nothing NCCL reads",
                    shown(raw), "remove the blanks: KEY=VALUE at the start of the line"));
    }
    bool exported = false;
    if (core::starts_with(line, "export ") || core::starts_with(line, "export\t")) {
      exported = true;
      line = core::trim(line.substr(7));
    }
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) {
      if (!conf && valid_name(line)) continue;  // docker: a bare NAME passes the host's value through
      report(syntax(where, "not a KEY=VALUE line; " + consumer + " ignores it", shown(raw),
                    "remove the line or make it a comment (#)"));
      continue;
    }
    std::string key(core::trim(line.substr(0, eq)));
    std::string value(line.substr(eq + 1));
    if (!valid_name(key) || has_control(value)) {
      report(syntax(where, "not a valid variable name or value (binary or control characters)", shown(raw),
                    "fix or remove the line"));
      continue;
    }
    if (exported)
      report(syntax(where, "'export' prefix: " +
                               std::string(conf ? "NCCL reads the name as 'export " + key + "', which it never uses"
                                                : "docker --env-file rejects it and systemd ignores the line"),
                    shown(raw), "write " + key + "=VALUE without 'export'"));
    // Trailing blanks are part of the value for NCCL and docker, but never intended.
    const std::string_view trimmed = core::trim(value);
    if (trimmed.size() >= 2 && (trimmed.front() == '"' || trimmed.front() == '\'') && trimmed.back() == trimmed.front()) {
      report(syntax(where,
                    std::string("quoted value: ") +
                        (conf ? "NCCL keeps the quotes as part of the value"
                              : "docker --env-file keeps the quotes, systemd removes them; the two disagree"),
                    shown(raw), "write " + key + "=" + std::string(trimmed.substr(1, trimmed.size() - 2)) +
                                    " without quotes"));
      value = std::string(trimmed.substr(1, trimmed.size() - 2));
    } else if (!trimmed.empty() && (trimmed.front() == '"' || trimmed.front() == '\'')) {
      report(syntax(where, "unbalanced quote in the value", shown(raw), "remove the quote"));
      value = std::string(trimmed);
    } else if (trimmed.size() != value.size()) {
      report(syntax(where, "blanks around the value are part of it for " + consumer, shown(raw),
                    "write " + key + "=" + std::string(trimmed)));
      value = std::string(trimmed);
    }
    if (value.size() > kNcclValueMax) {
      report(syntax(where, "value of " + std::to_string(value.size()) + " bytes: NCCL keeps only the first " +
                               std::to_string(kNcclValueMax),
                    shown(raw), "shorten the value"));
      value.resize(kNcclValueMax);
    }
    out.entries.push_back({source, lineno, std::move(key), std::move(value)});
  }
  if (dropped > 0) {
    Finding f = syntax(source, std::to_string(dropped) + " more lines with problems (only the first " +
                                   std::to_string(kMaxSyntaxFindings) + " are listed)",
                       "", "fix the lines above first");
    out.findings.push_back(std::move(f));
  }
  return out;
}

}  // namespace fabscope::ncclenv
