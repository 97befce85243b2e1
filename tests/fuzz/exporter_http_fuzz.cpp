// libFuzzer target for the exporter's HTTP request-head parser (bytes from the network) and its
// --listen address parser. The input is what a client sends (seeds: real request heads).
// Build and run: scripts/fuzz.sh exporter_http (or cmake --preset fuzz; see tests/fuzz/README).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "exporter/http.hpp"
#include "exporter/http_request.hpp"

namespace {

using namespace fabscope::exporter;

void check_stream(std::string_view all, const HttpLimits& limits) {
  // The head may arrive in two reads: a complete parse of the first half never claims more.
  std::size_t cut = all.size() / 2;
  ParseResult prefix = parse_request(all.substr(0, cut), limits);
  if (prefix.status == ParseStatus::Complete && prefix.consumed > cut) std::abort();
  // Every request in the buffer, the way the server's loop consumes pipelined requests.
  std::string_view rest = all;
  while (!rest.empty()) {
    ParseResult r = parse_request(rest, limits);
    if (r.status != ParseStatus::Complete) break;
    if (r.consumed == 0 || r.consumed > rest.size() || r.consumed > limits.max_request_bytes) std::abort();
    if (r.request.path.empty() || r.request.path[0] != '/') std::abort();
    if (r.request.has_body) break;  // the server answers and closes
    rest.remove_prefix(r.consumed);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabscope::exporter;
  std::string_view all(reinterpret_cast<const char*>(data), size);
  // The server's limits, then small ones (picked by the last byte) so that the 431 paths are
  // reached with short inputs too.
  HttpLimits limits;
  check_stream(all, limits);
  if (size > 0) {
    limits.max_request_bytes = 32 + data[size - 1] * 4;
    limits.max_headers = data[size - 1] % 16;
    check_stream(all, limits);
  }
  try {
    (void)parse_listen_address(std::string(all.substr(0, 64)));
  } catch (const fabscope::Error&) {
  }
  return 0;
}
