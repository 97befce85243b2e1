#pragma once
// HTTP/1.x request-head parsing for the exporter's server: a pure function over the bytes received
// so far, so that limits (size, header count) are tested on values and fuzzed. The exporter never
// reads request bodies: a request that announces one is answered and the connection closed.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fabscope::exporter {

struct HttpLimits {
  std::size_t max_request_bytes = 8192;  // request line + headers
  std::size_t max_headers = 64;
};

struct HttpRequest {
  std::string method;  // "GET"
  std::string target;  // "/metrics?x=1"
  std::string path;    // "/metrics"
  int minor_version = 1;  // HTTP/1.<minor>
  bool keep_alive = true;
  bool has_body = false;  // Content-Length > 0 or Transfer-Encoding
  bool accepts_gzip = false;  // accept_encoding_gzip of its Accept-Encoding field lines
};

enum class ParseStatus { Incomplete, Complete, Error };

struct ParseResult {
  ParseStatus status = ParseStatus::Incomplete;
  HttpRequest request;        // when Complete
  std::size_t consumed = 0;   // bytes of the head, when Complete
  int error_status = 0;       // 400, 431, 505 when Error
  std::string error;          // why, for the response body
};

ParseResult parse_request(std::string_view buf, const HttpLimits& limits);

// A weight (RFC 9110 section 12.4.2: 0, 0.5, 1.000; at most three decimals, 0 to 1) in
// thousandths; nullopt when it is not one (q=-1, q=2, q=.5).
std::optional<int> parse_qvalue(std::string_view v);
// Whether an Accept-Encoding list (RFC 9110 section 12.5.3) takes gzip: gzip (or x-gzip) listed
// with a weight above 0; else "*" with a weight above 0. gzip listed with q=0 anywhere refuses it
// whatever "*" says; an element whose weight is not a qvalue is ignored.
bool accept_encoding_gzip(std::string_view list);

}  // namespace fabscope::exporter
