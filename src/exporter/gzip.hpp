#pragma once
// gzip for the fabric's exposition text (`exporter --fabric`): tens of megabytes of series per
// scrape on a large fabric compress about 15 to 1, and Prometheus asks for gzip. zlib is opened
// with dlopen on first use, so node mode, which never compresses, opens no library for it.
// A gzip stream may hold several members (RFC 1952 section 2.2) and readers (Go's compress/gzip
// in Prometheus, gzip(1), Python's gzip) read them as one text: the fabric's part is compressed
// once per collection and sent after the node's part, compressed per scrape.
#include <optional>
#include <string>
#include <string_view>

namespace fabscope::exporter {

// One gzip member holding text, at zlib level 1 (fastest); nullopt when zlib (libz.so.1) cannot
// be loaded or fails (the caller serves the text uncompressed).
std::optional<std::string> gzip_member(std::string_view text);

// Whether libz.so.1 could be loaded (loads it on the first call).
bool gzip_available();

}  // namespace fabscope::exporter
