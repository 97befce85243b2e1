#pragma once
// The search over the environment-only settings (tune/env_space.hpp): every measurement is one
// fresh process (and communicator) that measures every point (collective x size) with NCCL left
// to choose algorithm, protocol and channels. One setting at a time, in the order of
// env_groups(), each on top of the values already kept:
//   1. successive halving over the setting's values (tune/halving.hpp's rule): a process per
//      value, scored by the geometric mean over the points of (base time / candidate time), the
//      base (the values kept so far) measured again in every rung;
//   2. verification of the best against the base: pairs of fresh processes in ABBA order;
//   3. kept only when the geometric-mean speedup is above 1 beyond the noise (the lower end of
//      its 95% CI over the pairs) and no point is slower than the base by more than
//      max_slowdown on average. Otherwise the setting stays at NCCL's default.
// Pure over the EnvMeasurer: tests run it on the simulated model; the CLI runs it through
// worker processes (tune/env_worker.hpp).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/collectives.hpp"
#include "core/json.hpp"
#include "tune/env_space.hpp"
#include "tune/verify.hpp"

namespace fabscope::tune {

struct EnvPoint {
  bench::Collective collective = bench::Collective::AllReduce;
  std::uint64_t bytes = 0;
};

// What one process reports.
struct ProcessResult {
  std::vector<double> time_us;  // one per point, in order
  int nranks = 0;
  int nnodes = 0;
  std::string net_path;         // net_path_name() as the process's rank 0 saw it
  std::string nccl_version;
  double compute_load_busy_share = -1;  // with a compute load: the share of the time it ran
};

class EnvMeasurer {
 public:
  virtual ~EnvMeasurer() = default;
  // A fresh process with `env` set before NCCL starts, each point measured with about budget_s
  // of timed work. Throws fabscope::Error when the process fails (its message names it).
  virtual ProcessResult run_process(const EnvAssignment& env, double budget_s) = 0;
  virtual std::int64_t processes() const = 0;
  // The tuner table the following processes load through the plugin, so NCCL runs its rows
  // ("" none: NCCL decides every call). Set before the search measures on top of a table.
  virtual void load_table(const std::string& path) = 0;
};

struct EnvSearchRule {
  double eta = 3;
  double first_budget_s = 5e-3;  // per point in rung 0 (x eta per rung)
  int max_rungs = 3;
  int pairs = 4;                 // verification: base/candidate process pairs
  double verify_budget_s = 0.02; // per point per verification process
  double max_slowdown = 0.02;    // never kept when a point's mean speedup is below 1 / (1 + this)
  double min_gain = 0.0;         // the CI's lower end must clear 1 + min_gain
};

struct EnvTrial {
  EnvAssignment env;             // the whole environment of the process
  int rung = 0;
  std::vector<double> time_us;
  double score = 1;              // geometric-mean speedup over the rung's base (base: 1)
};

struct EnvGroupOutcome {
  EnvGroup group;
  EnvAssignment base;            // values kept by the settings searched before this one
  std::vector<EnvTrial> trials;
  EnvAssignment best;            // best searched value of this setting (empty: the default won)
  bool verified = false;
  bool kept = false;
  Verdict overall;               // geometric mean over the points, per pair
  std::vector<Verdict> per_point;
  std::string reason;
};

// The last step of a search made on top of a tuner table: NCCL's defaults (no table, no
// variable set) against the table with the kept values, in pairs of fresh processes. The kept
// values were each verified against the table alone; this is the end-to-end figure the report
// gives, and the guard of the 2% rule across both parts: when a point of the combination is
// slower than NCCL's defaults by more than max_slowdown, the values are dropped (the table alone
// stays, verified per size in its own search).
struct CombinedCheck {
  EnvAssignment env;             // the values checked with the table
  bool verified = false;         // false: not measured (no table, or nothing kept); see reason
  bool kept = true;              // false: the values were dropped by this check
  Verdict overall;               // geometric mean over the points, per pair
  std::vector<Verdict> per_point;
  std::string reason;
};

struct EnvSearchResult {
  static constexpr int kSchemaVersion = 1;
  std::string net_path;
  std::string launch;            // how the processes were started
  std::string table;             // the tuner table every process loaded ("" none)
  std::vector<EnvPoint> points;
  std::vector<EnvGroupOutcome> groups;
  EnvAssignment chosen;          // every kept value (after the combined check)
  std::optional<CombinedCheck> combined;  // searched on a table: the check of both together
  std::int64_t processes = 0;
};

// progress (optional) gets one line per step (a setting's search, its verification): each
// process takes seconds on GPUs (the job and its communicator start every time).
using EnvProgress = std::function<void(const std::string&)>;
EnvSearchResult run_env_search(EnvMeasurer& m, const std::vector<EnvPoint>& points,
                               const std::vector<EnvGroup>& groups, const EnvSearchRule& rule,
                               const EnvProgress& progress = {});

// The search on top of a tuner table (the order `fabscope tune` uses: the per-call table is
// searched first, under NCCL's default environment): every process loads table_path (empty: no
// table, as run_env_search), then, when values were kept and a table was loaded, the
// CombinedCheck against NCCL's defaults. A dropped combination leaves `chosen` empty.
EnvSearchResult run_env_search_on_table(EnvMeasurer& m, const std::vector<EnvPoint>& points,
                                        const std::vector<EnvGroup>& groups, const EnvSearchRule& rule,
                                        const std::string& table_path, const EnvProgress& progress = {});

// The combined check's rule on measured pairs (pure): base = NCCL's defaults, cand = the table
// with the values; [pair][point].
void judge_combined(CombinedCheck& c, const std::vector<std::vector<double>>& base_us,
                    const std::vector<std::vector<double>>& cand_us, const EnvSearchRule& rule);

// The rule of step 3 on measured pairs (pure): per_point[i] are the pairs' times of point i.
void judge_env(EnvGroupOutcome& g, const std::vector<std::vector<double>>& base_us,
               const std::vector<std::vector<double>>& cand_us, const EnvSearchRule& rule);

// JSON (the "env_search" member of fabscope.tune, docs/formats.md); read back by
// saved_result.hpp (env_search_from_fields).
json env_search_json(const EnvSearchResult& r);

}  // namespace fabscope::tune
