// libFuzzer target for the exporter's Accept-Encoding parser (a field a client sends) and its
// qvalue parser. Properties checked beyond not crashing: a list that never names gzip or "*"
// never gets gzip; a list with "gzip;q=0" added anywhere never gets gzip; a weight comes back
// within 0..1000 and only for text a qvalue allows.
// Build and run: scripts/fuzz.sh accept_encoding (or cmake --preset fuzz; see tests/fuzz/README).
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "exporter/http_request.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabscope::exporter;
  const std::string list(reinterpret_cast<const char*>(data), size);
  const bool gzip = accept_encoding_gzip(list);
  std::string lower = list;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (gzip && lower.find("gzip") == std::string::npos && lower.find('*') == std::string::npos) std::abort();
  if (accept_encoding_gzip(list + ", gzip;q=0") || accept_encoding_gzip("gzip;q=0," + list)) std::abort();
  if (auto q = parse_qvalue(list)) {
    if (*q < 0 || *q > 1000 || list.size() > 5 || (list[0] != '0' && list[0] != '1')) std::abort();
  }
  // The same list as a header of a request agrees with the function (when the head parses).
  if (list.find_first_of("\r\n") == std::string::npos) {
    auto r = parse_request("GET / HTTP/1.1\r\nAccept-Encoding: " + list + "\r\n\r\n", HttpLimits{});
    if (r.status == ParseStatus::Complete && r.request.accepts_gzip != accept_encoding_gzip(list)) {
      // parse_request trims the field value; the function trims each element: they agree.
      std::abort();
    }
  }
  return 0;
}
