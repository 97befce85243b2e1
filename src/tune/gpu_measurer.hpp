#pragma once
// The Measurer on real GPUs: one bench session (its launchers, communicators, adaptive timing),
// with fabscope's tuner plugin loaded into NCCL (NCCL_TUNER_PLUGIN) and each choice forced per
// call through the plugin's fabscope_tuner_force() in the same communicator: no communicator is
// rebuilt between candidates. Every rank runs the same search on the same (rank-averaged) times,
// so every rank forces the same choice without talking.
#include <memory>
#include <string>

#include "bench/options.hpp"
#include "bench/run.hpp"
#include "tune/measure.hpp"

namespace fabscope::tune {

// The plugin: the path given (flag or FABSCOPE_TUNER_PLUGIN), else libnccl-tuner-fabscope.so beside
// the fabscope binary, in ../lib/fabscope/ (installed) or in the build tree. Throws fabscope::Error listing the paths.
std::string find_tuner_plugin(const std::string& given);

class GpuMeasurer : public Measurer {
 public:
  // Sets NCCL_TUNER_PLUGIN and NCCL_TUNER_CONFIG_FILE (table_path; "" = no rows, only forced
  // choices) before NCCL starts, opens the plugin and the bench session. With a table, a call
  // measured with NCCL's default runs the table's row where one matches. Throws fabscope::Error.
  GpuMeasurer(const bench::Options& base, const std::string& plugin_path, const std::string& table_path = "");
  ~GpuMeasurer() override;
  Measurement measure(bench::Collective c, std::uint64_t bytes, const Choice& choice, double budget_s) override;
  int nranks() const override { return nccl_nranks_ > 0 ? nccl_nranks_ : session_->nranks(); }
  // NCCL's node count, as it gave it to the plugin (what a table row must match): ranks of one
  // host joined only by the network are separate nodes to NCCL. The hosts' count where the plugin
  // does not say (a build without fabscope_tuner_shape).
  int nnodes() const override { return nccl_nnodes_ > 0 ? nccl_nnodes_ : session_->nodes(); }
  int hosts() const { return session_->nodes(); }
  void set_compute_load(double pct) override { base_.compute_load_pct = pct; }
  bool prints() const { return session_->prints(); }
  std::string nccl_version() const { return nccl_version_; }
  std::string launcher() const { return launcher_; }
  // With Options::compute_load_pct: the mean share of the measured time the load kernel ran.
  double compute_load_busy_share() const { return load_runs_ ? load_busy_sum_ / load_runs_ : -1; }

 private:
  bench::Options base_;
  std::unique_ptr<bench::Session> session_;
  void* plugin_ = nullptr;
  int (*force_)(int, int, int, int) = nullptr;
  void (*stats_)(long*, long*) = nullptr;
  int nccl_nranks_ = 0, nccl_nnodes_ = 0;
  std::string nccl_version_, launcher_;
  double load_busy_sum_ = 0;
  int load_runs_ = 0;
};

}  // namespace fabscope::tune
