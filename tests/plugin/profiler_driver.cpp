// fabscope-profiler-driver: a synthetic job for tests and benchmarks of `exporter --jobs` and
// `fabscope job`. Forks RANKS processes; each loads libnccl-profiler-fabscope.so and drives it as
// NCCL 2.28 does (profiler_caller.hpp) through COMMS communicators: OPS all-reduces per
// communicator over SIZES message sizes (powers of 4 from 1 KiB), GPU times chosen from a bus
// bandwidth, then (--period-ms) one more collective per communicator every period, and stays alive
// (the segment's writer holds its lock) until SIGTERM or SIGINT, and exits.
//
//   fabscope-profiler-driver PLUGIN DIR [--ranks N] [--comms N] [--ops N] [--sizes N]
//       [--busbw GBPS] [--slow-rank R --slow-factor F] [--in-flight] [--job ID]
//       [--first-rank K --nranks N]   this driver runs ranks K..K+RANKS-1 of a communicator of N
//       [--host NAME]                 the host name the segments carry (FABSCOPE_PROFILER_HOST)
//       [--gpu-offset-ns X]           added to every GPU time (another host's clock)
//       [--straggler R --delay-us D]  rank R enters every collective D µs after the others; they
//                                     wait for it
//       [--jitter-us J]               each rank's arrival jitters by up to J µs (default 0), the
//                                     same in every driver of the job
//       [--behind R]                  with --in-flight: rank R does not start the last collective
//       [--proxy-steps N [--link-us W] [--slow-link A:B --slow-link-us U]]  network steps to the
//                                     next rank per collective, each waiting W µs on the network;
//                                     rank A's steps to B wait U µs each
//       [--period-ms P]               keep issuing collectives every P ms
//
// Prints "ready <pid>..." on stdout when every rank has published. No GPU, no NCCL: the event
// sequence and the GPU times are the harness's.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
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
  const int first = static_cast<int>(arg(argc, argv, "--first-rank", 0));
  const int nranks = static_cast<int>(arg(argc, argv, "--nranks", first + ranks));
  const long long gpu_offset = std::strtoll(sarg(argc, argv, "--gpu-offset-ns", "0"), nullptr, 10);
  const int straggler = static_cast<int>(arg(argc, argv, "--straggler", -1));
  const double delay_ns = 1e3 * std::strtod(sarg(argc, argv, "--delay-us", "0"), nullptr);
  const double jitter_ns = 1e3 * std::strtod(sarg(argc, argv, "--jitter-us", "0"), nullptr);
  const int behind = static_cast<int>(arg(argc, argv, "--behind", -1));
  const int proxy_steps = static_cast<int>(arg(argc, argv, "--proxy-steps", 0));
  const long period_ms = arg(argc, argv, "--period-ms", 0);
  int slow_from = -1, slow_to = -1;
  if (const char* sl = sarg(argc, argv, "--slow-link", nullptr)) std::sscanf(sl, "%d:%d", &slow_from, &slow_to);
  const long slow_link_ns = 1000 * arg(argc, argv, "--slow-link-us", 0);
  const long link_ns = 1000 * arg(argc, argv, "--link-us", 0);
  if (ranks < 1 || first < 0 || first + ranks > nranks) {
    std::fprintf(stderr, "--first-rank %d with --ranks %d does not fit --nranks %d\n", first, ranks, nranks);
    return 3;
  }
  setenv("FABSCOPE_PROFILER_DIR", argv[2], 1);
  setenv("FABSCOPE_JOB_ID", sarg(argc, argv, "--job", "driver"), 1);
  if (const char* h = sarg(argc, argv, "--host", nullptr)) setenv("FABSCOPE_PROFILER_HOST", h, 1);
  if (proxy_steps > 0) setenv("FABSCOPE_PROFILER_PROXY", "1", 1);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  int ready[2];
  if (pipe(ready) != 0) return 3;
  std::vector<pid_t> pids;
  for (int local = 0; local < ranks; local++) {
    const int r = first + local;
    pid_t pid = fork();
    if (pid == 0) {
      close(ready[0]);
      ProfilerPlugin p(argv[1]);
      std::vector<std::unique_ptr<Comm5>> cs;
      for (int c = 0; c < comms; c++)
        cs.push_back(std::make_unique<Comm5>(p, 0xc0ffee00ull + static_cast<unsigned>(c), r, nranks, 1,
                                             c == 0 ? "world" : "sub"));
      // Arrival jitter of rank q in collective i: the same number in every driver of the job.
      auto jitter = [&](long i, int q) {
        std::uint64_t x = static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(q + 1) * 0xBF58476D1CE4E5B9ull;
        x ^= x >> 31;
        x *= 0x94D049BB133111EBull;
        x ^= x >> 29;
        return jitter_ns * static_cast<double>(x % 1000000) / 1e6;
      };
      std::uint64_t t = 1'000'000'000;
      auto one = [&](long i, int c) {
        CollSpec s;
        s.seq = static_cast<std::uint64_t>(i);
        s.count = (1024u / 4u) << (2 * (i % sizes));  // floats: 1 KiB, 4 KiB, ...
        const double bytes = static_cast<double>(s.count) * 4;
        double ns = bytes * 2.0 * (nranks - 1) / nranks / busbw + 5000;  // all-reduce factor, 5 µs latency
        if (r == slow_rank) ns *= slow;
        // everyone leaves together once the last one has arrived
        double last = 0;
        for (int q = 0; q < nranks; q++) last = std::max(last, jitter(i, q) + (q == straggler ? delay_ns : 0));
        const double arrive = jitter(i, r) + (r == straggler ? delay_ns : 0);
        s.gpu_start = static_cast<std::uint64_t>(static_cast<long long>(t + static_cast<std::uint64_t>(arrive)) + gpu_offset);
        s.gpu_ns = static_cast<std::uint64_t>(last - arrive + ns);
        t += static_cast<std::uint64_t>(last + ns) + 1000;
        cs[c]->collective(s);
        if (proxy_steps > 0) {
          const int to = (r + 1) % nranks, from = (r + nranks - 1) % nranks;
          cs[c]->network(to, true, proxy_steps, 65536, 0, r == slow_from && to == slow_to ? slow_link_ns : link_ns);
          cs[c]->network(from, false, proxy_steps, 65536, 0);
        }
      };
      long i = 0;
      for (; i < ops; i++)
        for (int c = 0; c < comms; c++) one(i, c);
      if (in_flight && r != behind) cs[0]->start_coll(CollSpec{.seq = static_cast<std::uint64_t>(ops)});
      char b = 1;
      (void)!write(ready[1], &b, 1);
      if (period_ms > 0 && !in_flight) {
        while (!g_stop) {
          timespec ts{period_ms / 1000, (period_ms % 1000) * 1'000'000L};
          nanosleep(&ts, nullptr);
          for (int c = 0; c < comms; c++) one(i, c);
          i++;
        }
      }
      while (!g_stop) pause();
      _exit(0);  // no finalize: as a job killed by its scheduler
    }
    pids.push_back(pid);
  }
  close(ready[1]);
  char b;
  for (int local = 0; local < ranks; local++)
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
