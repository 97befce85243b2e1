#include "tune/gpu_measurer.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "core/error.hpp"

namespace fabscope::tune {

namespace fs = std::filesystem;

std::string find_tuner_plugin(const std::string& given) {
  std::string path = given;
  if (path.empty()) {
    if (const char* e = std::getenv("FABSCOPE_TUNER_PLUGIN")) path = e;
  }
  if (!path.empty()) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) throw Error("tuner plugin '" + path + "' does not exist");
    return fs::absolute(path).string();
  }
  std::vector<std::string> tried;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path dir = exe.parent_path();
    for (fs::path p : {dir / "libnccl-tuner-fabscope.so",
                       dir.parent_path() / "lib" / "fabscope" / "libnccl-tuner-fabscope.so",
                       dir.parent_path().parent_path() / "plugins" / "nccl-tuner" / "libnccl-tuner-fabscope.so"}) {
      tried.push_back(p.lexically_normal().string());
      if (fs::is_regular_file(p, ec)) return p.lexically_normal().string();
    }
  }
  std::string list;
  for (const auto& t : tried) list += (list.empty() ? "" : ", ") + t;
  throw Error("libnccl-tuner-fabscope.so was not found (tried " + list +
              "); pass --plugin PATH or set FABSCOPE_TUNER_PLUGIN");
}

GpuMeasurer::GpuMeasurer(const bench::Options& base, const std::string& plugin_path, const std::string& table_path)
    : base_(base) {
  // Before any communicator exists: NCCL reads both when it creates the first one.
  if (const char* old = std::getenv("NCCL_TUNER_PLUGIN"); old && plugin_path != old)
    std::fprintf(stderr, "fabscope tune: NCCL_TUNER_PLUGIN=%s replaced by %s for the measurement\n", old,
                 plugin_path.c_str());
  setenv("NCCL_TUNER_PLUGIN", plugin_path.c_str(), 1);
  // No table: no rows, only forced choices.
  setenv("NCCL_TUNER_CONFIG_FILE", table_path.empty() ? "/dev/null" : table_path.c_str(), 1);
  // Opened here by the same path NCCL opens it, so both see one copy and one forced choice.
  plugin_ = dlopen(plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!plugin_) throw Error("cannot open the tuner plugin " + plugin_path + ": " + dlerror());
  force_ = reinterpret_cast<int (*)(int, int, int, int)>(dlsym(plugin_, "fabscope_tuner_force"));
  stats_ = reinterpret_cast<void (*)(long*, long*)>(dlsym(plugin_, "fabscope_tuner_force_stats"));
  if (!force_ || !stats_)
    throw Error(plugin_path + " is not fabscope's tuner plugin (no fabscope_tuner_force)");
  base_.in_place = false;
  base_.check = false;
  base_.progress = false;
  base_.stop.adaptive = true;
  session_ = bench::Session::open(base_);
  // NCCL called the plugin's init while creating the communicators above.
  using ShapeFn = int (*)(long*, long*);
  if (auto shape = reinterpret_cast<ShapeFn>(dlsym(plugin_, "fabscope_tuner_shape"))) {
    long nranks = 0, nnodes = 0;
    if (shape(&nranks, &nnodes) == 0 && nranks > 0 && nnodes > 0 && nranks <= (1 << 24) && nnodes <= nranks) {
      nccl_nranks_ = static_cast<int>(nranks);
      nccl_nnodes_ = static_cast<int>(nnodes);
    }
  }
}

GpuMeasurer::~GpuMeasurer() {
  session_.reset();  // communicators first: NCCL closes its handle of the plugin
  if (force_) force_(-1, -1, -1, -1);
  if (plugin_) dlclose(plugin_);
}

Measurement GpuMeasurer::measure(bench::Collective c, std::uint64_t bytes, const Choice& choice, double budget_s) {
  bench::Options o = base_;
  o.collective = c;
  o.sweep = bench::SweepSpec{};
  o.sweep.list = {bytes};
  o.stop.max_time_s = budget_s;
  if (force_(choice.is_default() ? -1 : nccl_func(c), choice.algo, choice.proto, choice.channels) != 0)
    throw Error("tune: the plugin refused the choice " + label(choice));
  bench::Report rep = session_->run(o, {});
  long applied = 0, unavailable = 0;
  stats_(&applied, &unavailable);  // before the next force, which resets them
  force_(-1, -1, -1, -1);
  if (nccl_version_.empty()) {
    nccl_version_ = rep.env.nccl_version;
    launcher_ = rep.env.launcher;
  }
  if (rep.compute_load_busy_share >= 0) {
    load_busy_sum_ += rep.compute_load_busy_share;
    ++load_runs_;
  }
  if (rep.results.empty()) throw Error("tune: the bench session returned no result for " + std::to_string(bytes) + " B");
  Measurement m;
  const auto& t = rep.results.front().out_of_place;
  m.time_us = t.time_us;
  m.rel_ci = t.rel_ci;
  m.iterations = t.iterations;
  m.applied = choice.is_default() || unavailable == 0;
  return m;
}

}  // namespace fabscope::tune
