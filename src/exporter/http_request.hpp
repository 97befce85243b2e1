#pragma once
// HTTP/1.x request-head parsing for the exporter's server: a pure function over the bytes received
// so far, so that limits (size, header count) are tested on values and fuzzed. The exporter never
// reads request bodies: a request that announces one is answered and the connection closed.
#include <cstddef>
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
  bool accepts_gzip = false;  // Accept-Encoding lists gzip (or *) without q=0
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

}  // namespace fabscope::exporter
