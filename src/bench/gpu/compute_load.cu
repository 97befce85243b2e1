#include "bench/gpu/compute_load.hpp"

#include <cuda_runtime.h>

#include <chrono>
#include <cmath>

#include "core/error.hpp"

namespace fabscope::bench::gpu {

namespace {

constexpr int kThreads = 1024;
constexpr double kKernelMs = 1.0;

__global__ void fma_load_kernel(unsigned long long ns, float* sink) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  float a = 1e-3f * threadIdx.x, b = 0.999f, c = 1e-4f;
  do {
#pragma unroll 64
    for (int i = 0; i < 256; ++i) {
      a = fmaf(a, b, c);
      b = fmaf(b, a, -c);
    }
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
  if (a == 123.456f && b == 654.321f) *sink = a + b;  // never true; keeps the chain alive
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string("compute load: ") + what + ": " + cudaGetErrorString(e));
}

// The caller's current device is left as it was (the harness sets its own per call).
struct KeepDevice {
  int device = -1;
  KeepDevice() { cudaGetDevice(&device); }
  ~KeepDevice() {
    if (device >= 0) cudaSetDevice(device);
  }
};

}  // namespace

struct ComputeLoad::Dev {
  int device = 0;
  cudaStream_t stream = nullptr;
  cudaEvent_t first = nullptr, last = nullptr;
  cudaEvent_t done[2] = {nullptr, nullptr};
  float* sink = nullptr;
  long launched = 0;
};

ComputeLoad::ComputeLoad(const std::vector<int>& devices, double pct) {
  if (!(pct > 0) || pct > 100) throw Error("compute load: " + std::to_string(pct) + "% is not in (0, 100]");
  KeepDevice keep;
  try {
    start(devices, pct);
  } catch (const Error&) {
    release();
    throw;
  }
  thread_ = std::thread([this] { feed(); });
}

void ComputeLoad::start(const std::vector<int>& devices, double pct) {
  for (int d : devices) {
    auto* x = new Dev;
    devs_.push_back(x);
    x->device = d;
    check(cudaSetDevice(d), "cudaSetDevice");
    int sms = 0;
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d), "cudaDeviceGetAttribute");
    blocks_ = std::max(1, static_cast<int>(std::ceil(pct / 100.0 * sms)));
    check(cudaStreamCreateWithFlags(&x->stream, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreate(&x->first), "cudaEventCreate");
    check(cudaEventCreate(&x->last), "cudaEventCreate");
    for (auto& e : x->done) check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    check(cudaMalloc(&x->sink, sizeof(float)), "cudaMalloc");
  }
}

void ComputeLoad::feed() {
  const auto ns = static_cast<unsigned long long>(kKernelMs * 1e6);
  try {
    for (Dev* x : devs_) {
      check(cudaSetDevice(x->device), "cudaSetDevice");
      check(cudaEventRecord(x->first, x->stream), "cudaEventRecord");
    }
    while (!stop_.load(std::memory_order_relaxed)) {
      bool launched = false;
      for (Dev* x : devs_) {
        // Two kernels in flight: launch the next one when the older has finished.
        cudaEvent_t slot = x->done[x->launched % 2];
        if (x->launched >= 2) {
          cudaError_t q = cudaEventQuery(slot);
          if (q == cudaErrorNotReady) continue;
          check(q, "cudaEventQuery");
        }
        check(cudaSetDevice(x->device), "cudaSetDevice");
        fma_load_kernel<<<blocks_, kThreads, 0, x->stream>>>(ns, x->sink);
        check(cudaGetLastError(), "kernel launch");
        check(cudaEventRecord(slot, x->stream), "cudaEventRecord");
        ++x->launched;
        launched = true;
      }
      if (!launched) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    for (Dev* x : devs_) {
      check(cudaSetDevice(x->device), "cudaSetDevice");
      check(cudaEventRecord(x->last, x->stream), "cudaEventRecord");
    }
  } catch (const Error& e) {
    error_ = e.what();
  }
}

double ComputeLoad::stop() {
  if (stopped_) return busy_share_;
  stopped_ = true;
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (!error_.empty()) throw Error(error_);
  KeepDevice keep;
  for (Dev* x : devs_) {
    check(cudaSetDevice(x->device), "cudaSetDevice");
    check(cudaStreamSynchronize(x->stream), "cudaStreamSynchronize");
  }
  if (!devs_.empty() && devs_.front()->launched > 0) {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, devs_.front()->first, devs_.front()->last), "cudaEventElapsedTime");
    busy_share_ = ms > 0 ? std::min(1.0, devs_.front()->launched * kKernelMs / ms) : 0;
  }
  return busy_share_;
}

ComputeLoad::~ComputeLoad() {
  try {
    stop();
  } catch (const Error&) {
  }
  release();
}

void ComputeLoad::release() {
  KeepDevice keep;
  for (Dev* x : devs_) {
    cudaSetDevice(x->device);
    if (x->stream) cudaStreamSynchronize(x->stream);
    if (x->sink) cudaFree(x->sink);
    for (auto e : {x->first, x->last, x->done[0], x->done[1]})
      if (e) cudaEventDestroy(e);
    if (x->stream) cudaStreamDestroy(x->stream);
    delete x;
  }
  devs_.clear();
}

}  // namespace fabscope::bench::gpu
