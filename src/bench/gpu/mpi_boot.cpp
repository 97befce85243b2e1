#include "bench/gpu/mpi_boot.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"

// The MPI calls live in the plugin fabscope-mpi.so (bench/mpi_plugin), built when MPI was found
// and opened here only when an MPI launcher started this process.
namespace fabscope::bench::gpu {

namespace {

struct Plugin {
  void* handle = nullptr;
  int (*init)(int*, int*, int*, int*) = nullptr;
  int (*bcast)(void*, std::size_t) = nullptr;
  void (*finalize)() = nullptr;
  void (*abort)(int) = nullptr;
  std::string error;  // why it could not be loaded
};

// Where the plugin is looked for: $FABSCOPE_MPI_PLUGIN, beside the binary (the build tree), and
// ../lib/fabscope/ from it (the install tree).
std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* p = std::getenv("FABSCOPE_MPI_PLUGIN"); p && *p) out.emplace_back(p);
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto dir = exe.parent_path();
    out.push_back((dir / "fabscope-mpi.so").string());
    out.push_back((dir.parent_path() / "lib" / "fabscope" / "fabscope-mpi.so").string());
  }
  return out;
}

Plugin& plugin() {
  static Plugin p = [] {
    Plugin pl;
#if defined(FABSCOPE_BENCH_HAVE_MPI)
    for (const auto& path : candidates()) {
      if (::access(path.c_str(), R_OK) != 0) continue;
      // RTLD_GLOBAL: Open MPI opens its own components later and they resolve symbols of libmpi.
      pl.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
      if (!pl.handle) {
        const char* e = dlerror();
        pl.error = path + ": " + (e ? e : "dlopen failed") +
                   " (is the MPI runtime this fabscope was built with installed, e.g. libopenmpi3?)";
        return pl;
      }
      pl.init = reinterpret_cast<int (*)(int*, int*, int*, int*)>(dlsym(pl.handle, "fabscope_mpi_init"));
      pl.bcast = reinterpret_cast<int (*)(void*, std::size_t)>(dlsym(pl.handle, "fabscope_mpi_bcast_from_root"));
      pl.finalize = reinterpret_cast<void (*)()>(dlsym(pl.handle, "fabscope_mpi_finalize"));
      pl.abort = reinterpret_cast<void (*)(int)>(dlsym(pl.handle, "fabscope_mpi_abort"));
      if (!pl.init || !pl.bcast || !pl.finalize || !pl.abort) {
        pl.error = path + ": not a fabscope MPI plugin (entry points missing)";
        pl.handle = nullptr;
      }
      return pl;
    }
    pl.error = "fabscope-mpi.so was not found beside the fabscope binary or in ../lib/fabscope/ "
               "(set FABSCOPE_MPI_PLUGIN to its path)";
#else
    pl.error = "this fabscope was built without MPI; rebuild with an MPI development package "
               "(e.g. libopenmpi-dev)";
#endif
    return pl;
  }();
  return p;
}

// Set by mpi_init: the other calls never load the plugin themselves (local and torchrun runs
// call mpi_finalize/mpi_abort too and must not pull in MPI).
Plugin* g_loaded = nullptr;

}  // namespace

bool mpi_built() {
#if defined(FABSCOPE_BENCH_HAVE_MPI)
  return true;
#else
  return false;
#endif
}

MpiWorld mpi_init() {
  Plugin& p = plugin();
  if (!p.handle)
    throw Error("started by an MPI launcher, but MPI cannot be used: " + p.error +
                "; or start it with torchrun or --launcher local");
  MpiWorld w;
  if (p.init(&w.rank, &w.size, &w.local_rank, &w.local_size) != 0) throw Error("MPI_Init failed");
  g_loaded = &p;
  return w;
}

void mpi_bcast_from_root(void* data, std::size_t bytes) {
  if (g_loaded && g_loaded->bcast(data, bytes) != 0) throw Error("MPI_Bcast of the NCCL unique id failed");
}

void mpi_finalize() {
  if (g_loaded) g_loaded->finalize();
}

void mpi_abort(int code) {
  if (g_loaded) g_loaded->abort(code);
  std::_Exit(code);
}

}  // namespace fabscope::bench::gpu
