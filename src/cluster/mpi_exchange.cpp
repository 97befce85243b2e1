// The MPI exchange: the plugin fabscope-mpi.so (src/bench/mpi_plugin) carries the MPI calls, so
// the fabscope binary never links libmpi (docs/bench.md). Opened only when an MPI launcher
// started this process.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>

#include "cluster/exchange.hpp"
#include "core/error.hpp"

namespace fabscope::cluster {

namespace {

struct Api {
  int (*init)(int*, int*, int*, int*) = nullptr;
  int (*bcast)(void*, std::size_t) = nullptr;
  int (*gather_sizes)(std::uint64_t, std::uint64_t*) = nullptr;
  int (*gatherv)(const void*, std::uint64_t, void*, const std::uint64_t*) = nullptr;
  int (*barrier)() = nullptr;
  void (*finalize)() = nullptr;
};

template <typename F>
void bind(void* h, const char* name, F& f, const std::string& path) {
  f = reinterpret_cast<F>(dlsym(h, name));
  if (!f) throw Error(path + ": no entry point " + name + " (a fabscope-mpi.so of another fabscope version?)");
}

Api load() {
  std::vector<std::string> paths;
  if (const char* p = std::getenv("FABSCOPE_MPI_PLUGIN"); p && *p) paths.emplace_back(p);
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    paths.push_back((exe.parent_path() / "fabscope-mpi.so").string());
    paths.push_back((exe.parent_path().parent_path() / "lib" / "fabscope" / "fabscope-mpi.so").string());
  }
  for (const auto& path : paths) {
    if (::access(path.c_str(), R_OK) != 0) continue;
    // RTLD_GLOBAL: Open MPI opens its own components later and they resolve symbols of libmpi.
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
      const char* e = dlerror();
      throw Error(path + ": " + (e ? e : "dlopen failed") + " (is the MPI runtime installed, e.g. libopenmpi3?)");
    }
    Api a;
    bind(h, "fabscope_mpi_init", a.init, path);
    bind(h, "fabscope_mpi_bcast_from_root", a.bcast, path);
    bind(h, "fabscope_mpi_gather_sizes", a.gather_sizes, path);
    bind(h, "fabscope_mpi_gatherv", a.gatherv, path);
    bind(h, "fabscope_mpi_barrier", a.barrier, path);
    bind(h, "fabscope_mpi_finalize", a.finalize, path);
    return a;
  }
  throw Error("cluster: started by an MPI launcher, but fabscope-mpi.so was not found beside the fabscope binary "
              "or in ../lib/fabscope/ (set FABSCOPE_MPI_PLUGIN; this fabscope may be built without MPI)");
}

class MpiExchange : public Exchange {
 public:
  MpiExchange() : api_(load()) {
    int local_rank = 0, local_size = 1;
    if (api_.init(&rank_, &world_, &local_rank, &local_size) != 0) throw Error("cluster: MPI_Init failed");
  }
  ~MpiExchange() override { api_.finalize(); }
  int rank() const override { return rank_; }
  int world() const override { return world_; }
  std::string launcher() const override { return "mpi"; }
  std::string why_missing(int) const override { return ""; }  // MPI aborts the job instead
  std::string local_address() const override { return ""; }

  std::vector<std::optional<std::string>> gather(const std::string& mine) override {
    std::vector<std::uint64_t> sizes(rank_ == 0 ? static_cast<std::size_t>(world_) : 1);
    if (api_.gather_sizes(mine.size(), sizes.data()) != 0) throw Error("cluster: MPI_Gather of the sizes failed");
    std::string all;
    if (rank_ == 0) {
      std::uint64_t total = 0;
      for (auto s : sizes) total += s;
      if (total > (1ull << 31) - 1)
        throw Error("cluster: the gathered summaries total " + std::to_string(total) + " bytes, over MPI's 2 GiB");
      all.resize(total);
    }
    if (api_.gatherv(mine.data(), mine.size(), all.data(), sizes.data()) != 0)
      throw Error("cluster: MPI_Gatherv failed");
    std::vector<std::optional<std::string>> out;
    if (rank_ != 0) return out;
    std::size_t off = 0;
    for (auto s : sizes) {
      out.emplace_back(all.substr(off, s));
      off += s;
    }
    return out;
  }

  std::string broadcast(const std::string& from_root) override {
    std::uint64_t size = rank_ == 0 ? from_root.size() : 0;
    if (api_.bcast(&size, sizeof size) != 0) throw Error("cluster: MPI_Bcast failed");
    std::string data = rank_ == 0 ? from_root : std::string(size, '\0');
    if (size && api_.bcast(data.data(), size) != 0) throw Error("cluster: MPI_Bcast failed");
    return data;
  }

 private:
  Api api_;
  int rank_ = 0, world_ = 1;
};

}  // namespace

std::unique_ptr<Exchange> make_mpi_exchange() { return std::make_unique<MpiExchange>(); }

}  // namespace fabscope::cluster
