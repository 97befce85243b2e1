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
  std::string out;
  out.resize(z.bound(&s, static_cast<uLong>(text.size())) + 32);
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  s.avail_in = static_cast<uInt>(text.size());
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = static_cast<uInt>(out.size());
  const int rc = z.deflate(&s, Z_FINISH);
  const std::size_t written = out.size() - s.avail_out;
  z.end(&s);
  if (rc != Z_STREAM_END) return std::nullopt;
  out.resize(written);
  out.shrink_to_fit();
  return out;
}

#else

bool gzip_available() { return false; }
std::optional<std::string> gzip_member(std::string_view) { return std::nullopt; }

#endif

}  // namespace fabscope::exporter
