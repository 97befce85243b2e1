// The worker protocol: the spec on the command line, the result line among NCCL's log lines, the
// launch command's words, and real child processes through ProcessEnvMeasurer.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "tune/env_worker.hpp"

namespace fabscope::tune {
namespace {

using bench::Collective;

WorkerSpec spec() {
  WorkerSpec s;
  s.points = {{Collective::AllReduce, 1024}, {Collective::AllGather, 1u << 20}};
  s.budget_s = 0.01;
  s.env = {{{"NCCL_BUFFSIZE", "8388608"}}};
  s.simulate = true;
  s.seed = 42;
  s.gpus = 4;
  s.plugin = "/opt/x/libnccl-tuner-fabscope.so";
  s.table = "/shared/tune/nccl_tuner.csv";
  s.compute_load_pct = 50;
  return s;
}

TEST(WorkerSpec, RoundTripsThroughTheCommandLine) {
  const WorkerSpec s = spec();
  const WorkerSpec back = worker_spec_from(worker_spec_json(s).dump());
  EXPECT_EQ(worker_spec_json(back), worker_spec_json(s));
}

TEST(WorkerSpec, BadSpecsAreUsageErrorsNamingTheProblem) {
  EXPECT_THROW(worker_spec_from("{"), UsageError);
  json j = worker_spec_json(spec());
  j["env"] = json::array({{{"name", "PATH"}, {"value", "/tmp"}}});
  try {
    worker_spec_from(j.dump());
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'PATH'"), std::string::npos) << e.what();
  }
  j = worker_spec_json(spec());
  j["compute_load_pct"] = 150;
  EXPECT_THROW(worker_spec_from(j.dump()), UsageError);
  j = worker_spec_json(spec());
  j["points"] = json::array();
  EXPECT_THROW(worker_spec_from(j.dump()), UsageError);
  j = worker_spec_json(spec());
  j["gpus"] = 1.4e138;  // a float into an int was a plain conversion (undefined behaviour)
  try {
    worker_spec_from(j.dump());
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'gpus'"), std::string::npos) << e.what();
  }
}

TEST(WorkerOutput, FindsTheResultAmongNcclsLogLines) {
  ProcessResult r{{1.5, 2.5}, 8, 2, "NET/IB", "2.28.3"};
  const std::string out = "host:1:1 [0] NCCL INFO NCCL_BUFFSIZE set by environment to 8388608.\n" + worker_line(r) +
                          "host:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 8 - Destroy COMPLETE\n";
  const ProcessResult back = parse_worker_output(out);
  EXPECT_EQ(back.time_us, r.time_us);
  EXPECT_EQ(back.nranks, 8);
  EXPECT_EQ(back.nnodes, 2);
  EXPECT_EQ(back.net_path, "NET/IB");
}

TEST(WorkerOutput, MissingOrBrokenLineIsAnError) {
  EXPECT_THROW(parse_worker_output("NCCL INFO nothing else\n"), Error);
  EXPECT_THROW(parse_worker_output("fabscope-tune-worker: {\"time_us\": 1}\n"), Error);
}

TEST(SplitLaunch, WordsQuotesAndEscapes) {
  EXPECT_EQ(split_launch("mpirun -np 16  -N 8"), (std::vector<std::string>{"mpirun", "-np", "16", "-N", "8"}));
  EXPECT_EQ(split_launch("srun --export='ALL,X=a b' \"-J\" a\\ b"),
            (std::vector<std::string>{"srun", "--export=ALL,X=a b", "-J", "a b"}));
  EXPECT_THROW(split_launch("mpirun 'x"), UsageError);
  EXPECT_THROW(split_launch("   "), UsageError);
}

TEST(ProcessEnvMeasurer, EachMeasurementIsANewProcessBehindTheLaunchCommand) {
  // The launch command is a shell that prints a result line, standing in for mpirun + worker:
  // the worker's own argv follows it (as $0, $1, ...), so the script can echo the spec back.
  ProcessResult r{{3.0, 4.0}, 2, 1, "none (one node)", "x"};
  std::string line = worker_line(r);
  line.pop_back();
  ProcessEnvMeasurer m({"/bin/sh", "-c", "printf '%s\\n' \"$0 $1\" >&2; echo '" + line + "'"}, "/path/fabscope",
                       spec());
  const auto argv = m.argv_for({{{"NCCL_NTHREADS", "256"}}}, 0.02);
  ASSERT_EQ(argv.size(), 7u);
  EXPECT_EQ(argv[3], "/path/fabscope");
  EXPECT_EQ(argv[4], "tune");
  EXPECT_EQ(argv[5], "--env-worker");
  const WorkerSpec sent = worker_spec_from(argv[6]);
  EXPECT_EQ(sent.env.label(), "NCCL_NTHREADS=256");
  EXPECT_DOUBLE_EQ(sent.budget_s, 0.02);
  auto got = m.run_process({}, 0.01);
  EXPECT_EQ(got.time_us, r.time_us);
  got = m.run_process({}, 0.01);
  EXPECT_EQ(m.processes(), 2);
  // Every process gets its own seed (a simulated worker's noise is not replayed).
  EXPECT_NE(worker_spec_from(m.argv_for({}, 0.01)[6]).seed, sent.seed);
}

TEST(ProcessEnvMeasurer, AFailingProcessIsAnErrorWithItsExitCodeAndStderr) {
  ProcessEnvMeasurer m({"/bin/sh", "-c", "echo 'NCCL WARN no GPU' >&2; exit 7"}, "/path/fabscope", spec());
  try {
    m.run_process({{{"NCCL_BUFFSIZE", "1048576"}}}, 0.01);
    FAIL();
  } catch (const Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("exited with 7"), std::string::npos) << w;
    EXPECT_NE(w.find("NCCL_BUFFSIZE=1048576"), std::string::npos) << w;
    EXPECT_NE(w.find("no GPU"), std::string::npos) << w;
  }
  ProcessEnvMeasurer none({"/nonexistent/launcher"}, "/path/fabscope", spec());
  EXPECT_THROW(none.run_process({}, 0.01), Error);
}

}  // namespace
}  // namespace fabscope::tune
