#pragma once
// Calls libnccl-profiler-fabscope.so the way NCCL 2.28 does (src/plugin/profiler.cc,
// src/transport/profiler.cc, src/proxy.cc of v2.28.3): one init per communicator; per operation the
// host's collective or p2p event, started before the kernel's launch and stopped right after it;
// then, from the proxy thread, one kernel-channel event per channel whose start and KernelChStop
// state carry the GPU's global timer; with proxy events, proxy ops per (channel, peer) and their
// steps with state transitions. Times are chosen by the caller, so no test waits on a clock.
#include <dlfcn.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>
#include <time.h>

#include "nccl_profiler_abi.h"

namespace fabscope::testing {

inline std::vector<std::string>& profiler_log_lines() {
  static std::vector<std::string> lines;
  return lines;
}

inline void profiler_logger(int, unsigned long, const char*, int, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  profiler_log_lines().emplace_back(buf);
}

class ProfilerPlugin {
 public:
  explicit ProfilerPlugin(const char* path) {
    // RTLD_LOCAL and a fresh handle per process: each test process holds its own plugin state
    lib_ = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib_ == nullptr) throw std::runtime_error(std::string("dlopen: ") + dlerror());
    v5 = static_cast<const fsp_profiler_v5*>(dlsym(lib_, "ncclProfiler_v5"));
    v4 = static_cast<const fsp_profiler_v4*>(dlsym(lib_, "ncclProfiler_v4"));
    auto p = reinterpret_cast<const char* (*)()>(dlsym(lib_, "fabscope_profiler_segment_path"));
    segment_path_fn = p;
  }
  ~ProfilerPlugin() = default;  // never dlclose: NCCL does not either while events may run
  void* lib_ = nullptr;
  const fsp_profiler_v5* v5 = nullptr;
  const fsp_profiler_v4* v4 = nullptr;
  const char* (*segment_path_fn)() = nullptr;
  std::string segment_path() const { return segment_path_fn ? segment_path_fn() : ""; }
};

struct CollSpec {
  const char* func = "AllReduce";
  std::size_t count = 262144;
  const char* datatype = "ncclFloat32";
  std::uint64_t seq = 0;
  int nchannels = 4;
  const char* algo = "RING";
  const char* proto = "SIMPLE";
  std::uint64_t gpu_start = 1'000'000'000;  // GPU global timer, ns
  std::uint64_t gpu_ns = 100'000;           // first channel's start to last channel's stop
};

// One communicator as NCCL drives it through the v5 interface.
class Comm5 {
 public:
  Comm5(const ProfilerPlugin& p, std::uint64_t hash, int rank, int nranks, int nnodes = 1, const char* name = "")
      : p_(p) {
    rc = p.v5->init(&ctx, hash, &mask, name, nnodes, nranks, rank, profiler_logger);
  }
  ~Comm5() {
    if (!finalized) p_.v5->finalize(ctx);
  }
  void finalize() {
    p_.v5->finalize(ctx);
    finalized = true;
  }

  void* start_coll(const CollSpec& s) {
    fsp_descr_v5 d{};
    d.type = FSP_EV_COLL;
    d.coll.seqNumber = s.seq;
    d.coll.func = s.func;
    d.coll.count = s.count;
    d.coll.datatype = s.datatype;
    d.coll.nChannels = static_cast<std::uint8_t>(s.nchannels);
    d.coll.algo = s.algo;
    d.coll.proto = s.proto;
    void* h = nullptr;
    p_.v5->startEvent(ctx, &h, &d);
    return h;
  }
  void* start_p2p(const char* func, std::size_t count, int peer, int nchannels) {
    fsp_descr_v5 d{};
    d.type = FSP_EV_P2P;
    d.p2p.func = func;
    d.p2p.count = count;
    d.p2p.datatype = "ncclInt8";
    d.p2p.peer = peer;
    d.p2p.nChannels = static_cast<std::uint8_t>(nchannels);
    void* h = nullptr;
    p_.v5->startEvent(ctx, &h, &d);
    return h;
  }
  void* start_channel(void* parent, int channel, std::uint64_t ptimer) {
    fsp_descr_v5 d{};
    d.type = FSP_EV_KERNEL_CH;
    d.parentObj = parent;
    d.kernelCh.channelId = static_cast<std::uint8_t>(channel);
    d.kernelCh.pTimer = ptimer;
    void* h = nullptr;
    p_.v5->startEvent(ctx, &h, &d);
    return h;
  }
  void stop_channel(void* h, std::uint64_t ptimer) {
    if (h == nullptr) return;  // as NCCL: no handle, no calls
    fsp_state_args a{};
    a.kernelCh.pTimer = ptimer;
    p_.v5->recordEventState(h, FSP_STATE_KERNEL_CH_STOP, &a);
    p_.v5->stopEvent(h);
  }
  void stop(void* h) {
    if (h != nullptr) p_.v5->stopEvent(h);
  }

  // The whole of one collective in NCCL's order: host start, host stop (after the launch), then the
  // proxy thread's channel events; channel c runs from gpu_start + c to gpu_start + gpu_ns - c.
  void collective(const CollSpec& s) {
    void* h = start_coll(s);
    stop(h);
    std::vector<void*> ch;
    for (int c = 0; c < s.nchannels; c++) ch.push_back(start_channel(h, c, s.gpu_start + static_cast<std::uint64_t>(c)));
    for (int c = 0; c < s.nchannels; c++) stop_channel(ch[c], s.gpu_start + s.gpu_ns - static_cast<std::uint64_t>(c));
  }

  // A proxy op to a peer with steps; each step spends wait_ns in the network's state.
  // wait_ns: time spent in the network's state per step (a slow connection), slept for real: the
  // plugin reads its own clock.
  void network(int peer, bool send, int steps, std::size_t step_bytes, int channel = 0, long wait_ns = 0) {
    fsp_descr_v5 op{};
    op.type = FSP_EV_PROXY_OP;
    op.proxyOp.pid = 0;
    op.proxyOp.channelId = static_cast<std::uint8_t>(channel);
    op.proxyOp.peer = peer;
    op.proxyOp.nSteps = steps;
    op.proxyOp.chunkSize = static_cast<int>(step_bytes);
    op.proxyOp.isSend = send ? 1 : 0;
    void* oh = nullptr;
    p_.v5->startEvent(ctx, &oh, &op);
    for (int i = 0; i < steps; i++) {
      fsp_descr_v5 st{};
      st.type = FSP_EV_PROXY_STEP;
      st.parentObj = oh;
      st.proxyStep.step = i;
      void* sh = nullptr;
      p_.v5->startEvent(ctx, &sh, &st);
      fsp_state_args a{};
      a.proxyStep.transSize = step_bytes;
      if (send) {
        p_.v5->recordEventState(sh, FSP_STATE_SEND_GPU_WAIT, &a);
        p_.v5->recordEventState(sh, FSP_STATE_SEND_PEER_WAIT, &a);
        p_.v5->recordEventState(sh, FSP_STATE_SEND_WAIT, &a);
        if (wait_ns > 0) {
          timespec ts{wait_ns / 1'000'000'000L, wait_ns % 1'000'000'000L};
          nanosleep(&ts, nullptr);
        }
      } else {
        p_.v5->recordEventState(sh, FSP_STATE_RECV_WAIT, &a);
        p_.v5->recordEventState(sh, FSP_STATE_RECV_FLUSH_WAIT, &a);
        p_.v5->recordEventState(sh, FSP_STATE_RECV_GPU_WAIT, &a);
      }
      if (sh) p_.v5->stopEvent(sh);
    }
    if (oh) p_.v5->stopEvent(oh);
  }

  // NCCL's activation mask as the plugin last set it (the plugin keeps the pointer init gave).
  int mask_ptr_value() const { return __atomic_load_n(&mask, __ATOMIC_RELAXED); }

  void* ctx = nullptr;
  int mask = 0;
  int rc = -1;
  bool finalized = false;

 private:
  const ProfilerPlugin& p_;
};

}  // namespace fabscope::testing
