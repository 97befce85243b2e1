#include "exporter/gzip.hpp"

#include <dlfcn.h>

#include <mutex>

#if __has_include(<zlib.h>)
#include <zlib.h>
#define FABSCOPE_HAVE_ZLIB_H 1
#endif

namespace fabscope::exporter {

#ifdef FABSCOPE_HAVE_ZLIB_H
namespace {

struct Zlib {
  int (*init)(z_streamp, int, int, int, int, int, const char*, int) = nullptr;
  int (*deflate)(z_streamp, int) = nullptr;
  int (*end)(z_streamp) = nullptr;
  uLong (*bound)(z_streamp, uLong) = nullptr;
  bool ok = false;
};

const Zlib& zlib() {
  static Zlib z;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    z.init = reinterpret_cast<decltype(z.init)>(dlsym(h, "deflateInit2_"));
    z.deflate = reinterpret_cast<decltype(z.deflate)>(dlsym(h, "deflate"));
    z.end = reinterpret_cast<decltype(z.end)>(dlsym(h, "deflateEnd"));
    z.bound = reinterpret_cast<decltype(z.bound)>(dlsym(h, "deflateBound"));
    z.ok = z.init && z.deflate && z.end && z.bound;
  });
  return z;
}

}  // namespace

bool gzip_available() { return zlib().ok; }

std::optional<std::string> gzip_member(std::string_view text) {
  const Zlib& z = zlib();
  if (!z.ok) return std::nullopt;
  z_stream s{};
  // windowBits 15 + 16: a gzip header and trailer around the deflate data.
  if (z.init(&s, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, static_cast<int>(sizeof(z_stream))) != Z_OK)
    return std::nullopt;
  // Out in 256 KiB steps, not a buffer of deflateBound(text) (the size of the text itself): the
  // fabric's text is tens of megabytes and compresses about 20 to 1.
  std::string out;
  out.reserve(text.size() / 16 + 64);
  std::string chunk(256 * 1024, '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  s.avail_in = static_cast<uInt>(text.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    s.next_out = reinterpret_cast<Bytef*>(chunk.data());
    s.avail_out = static_cast<uInt>(chunk.size());
    rc = z.deflate(&s, Z_FINISH);
    out.append(chunk.data(), chunk.size() - s.avail_out);
  }
  z.end(&s);
  if (rc != Z_STREAM_END) return std::nullopt;
  out.shrink_to_fit();
  return out;
}

#else

bool gzip_available() { return false; }
std::optional<std::string> gzip_member(std::string_view) { return std::nullopt; }

#endif

}  // namespace fabscope::exporter
