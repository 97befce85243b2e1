// fabscope-profiler-driver: a synthetic job for tests and benchmarks of `exporter --jobs`. Forks
// RANKS processes; each loads libnccl-profiler-fabscope.so and drives it as NCCL 2.28 does
// (profiler_caller.hpp) through COMMS communicators: OPS all-reduces per communicator over SIZES
// message sizes (powers of 4 from 1 KiB), GPU times chosen from a bus bandwidth, then stays alive
// (the segment's writer holds its lock) until SIGTERM or SIGINT, and exits.
//
//   fabscope-profiler-driver PLUGIN DIR [--ranks N] [--comms N] [--ops N] [--sizes N]
//                            [--busbw GBPS] [--slow-rank R --slow-factor F] [--in-flight] [--job ID]
//
// Prints "ready <pid>..." on stdout when every rank has published. No GPU, no NCCL: the event
// sequence and the times are the harness's.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "profiler_caller.hpp"

using fabscope::testing::CollSpec;
using fabscope::testing::Comm5;
using fabscope::testing::ProfilerPlugin;

namespace {
volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

long arg(int argc, char** argv, const char* name, long def) {
  for (int i = 3; i + 1 < argc; i++)
    if (std::strcmp(argv[i], name) == 0) return std::strtol(argv[i + 1], nullptr, 10);
  return def;
}
const char* sarg(int argc, char** argv, const char* name, const char* def) {
  for (int i = 3; i + 1 < argc; i++)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return def;
}
bool flag(int argc, char** argv, const char* name) {
  for (int i = 3; i < argc; i++)
    if (std::strcmp(argv[i], name) == 0) return true;
  return false;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s PLUGIN DIR [--ranks N] [--comms N] [--ops N] [--sizes N] [--busbw GBPS] "
                         "[--slow-rank R --slow-factor F] [--in-flight] [--job ID]\n", argv[0]);
    return 3;
  }
  const int ranks = static_cast<int>(arg(argc, argv, "--ranks", 4));
  const int comms = static_cast<int>(arg(argc, argv, "--comms", 2));
  const long ops = arg(argc, argv, "--ops", 100);
  const int sizes = static_cast<int>(arg(argc, argv, "--sizes", 8));
  const double busbw = std::strtod(sarg(argc, argv, "--busbw", "300"), nullptr);
  const int slow_rank = static_cast<int>(arg(argc, argv, "--slow-rank", -1));
  const double slow = std::strtod(sarg(argc, argv, "--slow-factor", "1"), nullptr);
  const bool in_flight = flag(argc, argv, "--in-flight");
  setenv("FABSCOPE_PROFILER_DIR", argv[2], 1);
  setenv("FABSCOPE_JOB_ID", sarg(argc, argv, "--job", "driver"), 1);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  int ready[2];
  if (pipe(ready) != 0) return 3;
  std::vector<pid_t> pids;
  for (int r = 0; r < ranks; r++) {
    pid_t pid = fork();
    if (pid == 0) {
      close(ready[0]);
      ProfilerPlugin p(argv[1]);
      std::vector<std::unique_ptr<Comm5>> cs;
      for (int c = 0; c < comms; c++)
        cs.push_back(std::make_unique<Comm5>(p, 0xc0ffee00ull + static_cast<unsigned>(c), r, ranks, 1,
                                             c == 0 ? "world" : "sub"));
      std::uint64_t t = 1'000'000'000;
      for (long i = 0; i < ops; i++)
        for (int c = 0; c < comms; c++) {
          CollSpec s;
          s.seq = static_cast<std::uint64_t>(i);
          s.count = (1024u / 4u) << (2 * (i % sizes));  // floats: 1 KiB, 4 KiB, ...
          const double bytes = static_cast<double>(s.count) * 4;
          double ns = bytes * 2.0 * (ranks - 1) / ranks / busbw + 5000;  // all-reduce factor, 5 µs latency
          if (r == slow_rank) ns *= slow;
          s.gpu_ns = static_cast<std::uint64_t>(ns);
          s.gpu_start = t;
          t += s.gpu_ns + 1000;
          cs[c]->collective(s);
        }
      if (in_flight) cs[0]->start_coll(CollSpec{.seq = static_cast<std::uint64_t>(ops)});
      char b = 1;
      (void)!write(ready[1], &b, 1);
      while (!g_stop) pause();
      _exit(0);  // no finalize: as a job killed by its scheduler
    }
    pids.push_back(pid);
  }
  close(ready[1]);
  char b;
  for (int r = 0; r < ranks; r++)
    if (read(ready[0], &b, 1) != 1) return 2;
  std::printf("ready");
  for (pid_t pid : pids) std::printf(" %d", static_cast<int>(pid));
  std::printf("\n");
  std::fflush(stdout);
  while (!g_stop) pause();
  for (pid_t pid : pids) kill(pid, SIGTERM);
  for (pid_t pid : pids) waitpid(pid, nullptr, 0);
  return 0;
}
