#include "exporter/http_request.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include "core/root.hpp"

namespace fabscope::exporter {

namespace {

ParseResult fail(int status, std::string why) {
  ParseResult r;
  r.status = ParseStatus::Error;
  r.error_status = status;
  r.error = std::move(why);
  return r;
}

bool is_tchar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

bool contains_token(std::string_view list, std::string_view token) {
  for (const auto& part : core::split(list, ','))
    if (iequals(core::trim(part), token)) return true;
  return false;
}

// Lines end in CRLF; a bare LF is accepted too (RFC 9112 section 2.2).
std::string_view strip_cr(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace

std::optional<int> parse_qvalue(std::string_view v) {
  // RFC 9110 section 12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ).
  if (v.empty() || (v[0] != '0' && v[0] != '1')) return std::nullopt;
  int thousandths = (v[0] - '0') * 1000;
  if (v.size() == 1) return thousandths;
  if (v[1] != '.' || v.size() > 5) return std::nullopt;
  int scale = 100;
  for (std::size_t i = 2; i < v.size(); ++i, scale /= 10) {
    if (v[i] < '0' || v[i] > '9') return std::nullopt;
    thousandths += (v[i] - '0') * scale;
  }
  if (thousandths > 1000) return std::nullopt;
  return thousandths;
}

bool accept_encoding_gzip(std::string_view list) {
  std::optional<int> gzip, star;
  bool gzip_refused = false;
  for (const auto& part : core::split(list, ',')) {
    auto item = core::trim(part);
    if (item.empty()) continue;
    const auto semi = item.find(';');
    const auto coding = core::trim(item.substr(0, semi));
    const bool is_gzip = iequals(coding, "gzip") || iequals(coding, "x-gzip");
    if (!is_gzip && coding != "*") continue;
    int q = 1000;
    bool valid = true;
    if (semi != std::string_view::npos) {
      for (const auto& param : core::split(item.substr(semi + 1), ';')) {
        const auto p = core::trim(param);
        const auto eq = p.find('=');
        if (eq == std::string_view::npos || !iequals(core::trim(p.substr(0, eq)), "q")) continue;
        const auto v = parse_qvalue(core::trim(p.substr(eq + 1)));
        if (!v) valid = false;
        else q = *v;
      }
    }
    if (!valid) continue;  // a weight that is not a qvalue (q=-1, q=2, q=abc): the element is ignored
    if (is_gzip) {
      if (q == 0) gzip_refused = true;
      gzip = std::max(gzip.value_or(0), q);
    } else {
      star = std::max(star.value_or(0), q);
    }
  }
  // gzip named explicitly decides, whatever "*" says (a refusal anywhere wins); else "*" does.
  if (gzip_refused) return false;
  if (gzip) return *gzip > 0;
  return star && *star > 0;
}

ParseResult parse_request(std::string_view buf, const HttpLimits& limits) {
  // RFC 9112 section 2.2: ignore at least one empty line before the request line.
  std::size_t start = 0;
  while (start < buf.size() && (buf[start] == '\r' || buf[start] == '\n') && start < 4) ++start;

  // Find the empty line that ends the head.
  std::size_t end = std::string_view::npos, pos = start;
  while (true) {
    auto nl = buf.find('\n', pos);
    if (nl == std::string_view::npos) break;
    auto line = strip_cr(buf.substr(pos, nl - pos));
    if (line.empty() && pos > start) {
      end = nl + 1;
      break;
    }
    pos = nl + 1;
  }
  if (end == std::string_view::npos) {
    if (buf.size() >= limits.max_request_bytes) return fail(431, "request head larger than " + std::to_string(limits.max_request_bytes) + " bytes");
    return {};
  }
  if (end > limits.max_request_bytes) return fail(431, "request head larger than " + std::to_string(limits.max_request_bytes) + " bytes");

  std::string_view head = buf.substr(start, end - start);
  auto first_nl = head.find('\n');
  auto request_line = strip_cr(head.substr(0, first_nl));

  ParseResult r;
  auto sp1 = request_line.find(' ');
  auto sp2 = sp1 == std::string_view::npos ? sp1 : request_line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || request_line.find(' ', sp2 + 1) != std::string_view::npos)
    return fail(400, "request line is not 'METHOD TARGET HTTP/1.x'");
  auto method = request_line.substr(0, sp1);
  auto target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  auto version = request_line.substr(sp2 + 1);
  if (method.empty() || method.size() > 16) return fail(400, "bad method");
  for (char c : method)
    if (!is_tchar(c)) return fail(400, "bad method");
  if (target.empty() || target[0] != '/') return fail(400, "request target must start with '/'");
  for (char c : target)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return fail(400, "control character in request target");
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/") return fail(400, "bad HTTP version");
  if (version[5] != '1' || version[6] != '.' || (version[7] != '0' && version[7] != '1'))
    return fail(505, "only HTTP/1.0 and HTTP/1.1 are supported");
  r.request.method = std::string(method);
  r.request.target = std::string(target);
  r.request.path = std::string(target.substr(0, target.find('?')));
  r.request.minor_version = version[7] - '0';

  bool conn_close = false, conn_keep = false;
  std::string accept_encoding;  // every Accept-Encoding field line, joined
  std::size_t headers = 0;
  std::size_t p = first_nl + 1;
  while (p < head.size()) {
    auto nl = head.find('\n', p);
    auto line = strip_cr(head.substr(p, nl - p));
    p = nl + 1;
    if (line.empty()) break;
    if (++headers > limits.max_headers) return fail(431, "more than " + std::to_string(limits.max_headers) + " header fields");
    auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return fail(400, "header field without a name");
    auto name = line.substr(0, colon);
    for (char c : name)
      if (!is_tchar(c)) return fail(400, "bad header field name");  // also rejects obs-fold
    auto value = core::trim(line.substr(colon + 1));
    if (iequals(name, "connection")) {
      conn_close = conn_close || contains_token(value, "close");
      conn_keep = conn_keep || contains_token(value, "keep-alive");
    } else if (iequals(name, "content-length")) {
      auto n = core::parse_u64(value);
      if (!n) return fail(400, "bad Content-Length");
      if (*n > 0) r.request.has_body = true;
    } else if (iequals(name, "transfer-encoding")) {
      r.request.has_body = true;
    } else if (iequals(name, "accept-encoding")) {
      // Several field lines are one list (RFC 9110 section 5.3).
      if (!accept_encoding.empty()) accept_encoding += ',';
      accept_encoding.append(value.substr(0, std::min<std::size_t>(value.size(), limits.max_request_bytes)));
    }
  }
  r.request.accepts_gzip = !accept_encoding.empty() && accept_encoding_gzip(accept_encoding);
  r.request.keep_alive = r.request.minor_version == 1 ? !conn_close : (conn_keep && !conn_close);
  if (r.request.has_body) r.request.keep_alive = false;
  r.status = ParseStatus::Complete;
  r.consumed = end;
  return r;
}

}  // namespace fabscope::exporter
