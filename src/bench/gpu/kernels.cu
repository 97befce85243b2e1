#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "bench/gpu/kernels.hpp"
#include "bench/reference.hpp"

namespace fabscope::bench::gpu {

namespace {

template <typename T>
__device__ inline T from_double(double v) { return static_cast<T>(v); }
template <>
__device__ inline __half from_double<__half>(double v) { return __float2half(static_cast<float>(v)); }
template <>
__device__ inline __nv_bfloat16 from_double<__nv_bfloat16>(double v) {
  return __float2bfloat16(static_cast<float>(v));
}

template <typename T>
__device__ inline double to_double(T v) { return static_cast<double>(v); }
template <>
__device__ inline double to_double<__half>(__half v) { return static_cast<double>(__half2float(v)); }
template <>
__device__ inline double to_double<__nv_bfloat16>(__nv_bfloat16 v) {
  return static_cast<double>(__bfloat162float(v));
}

template <typename T>
__global__ void fill_kernel(T* buf, std::size_t count, RedOp op, int rank) {
  std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    buf[i] = from_double<T>(ref::input_value(op, rank, i));
}

template <typename T>
__global__ void verify_kernel(const T* buf, std::size_t count, VerifyArgs a, unsigned long long* wrong) {
  unsigned long long bad = 0;
  std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    ref::Expectation e = ref::expected(a.coll, a.op, a.type, a.nranks, a.rank, a.root, a.per_rank, i);
    if (!e.checked) continue;
    double got = to_double(buf[i]);
    if (!ref::matches(got, e.value, ref::tolerance(a.type, a.op, a.nranks, e.value))) ++bad;
  }
  if (bad) atomicAdd(wrong, bad);
}

unsigned grid_for(std::size_t count) {
  std::size_t blocks = (count + 255) / 256;
  if (blocks > 2048) blocks = 2048;
  return blocks ? static_cast<unsigned>(blocks) : 1u;
}

template <typename F>
cudaError_t dispatch(DataType t, F&& f) {
  switch (t) {
    case DataType::Int8: return f(static_cast<std::int8_t*>(nullptr));
    case DataType::Uint8: return f(static_cast<std::uint8_t*>(nullptr));
    case DataType::Int32: return f(static_cast<std::int32_t*>(nullptr));
    case DataType::Uint32: return f(static_cast<std::uint32_t*>(nullptr));
    case DataType::Int64: return f(static_cast<std::int64_t*>(nullptr));
    case DataType::Uint64: return f(static_cast<std::uint64_t*>(nullptr));
    case DataType::Half: return f(static_cast<__half*>(nullptr));
    case DataType::Float: return f(static_cast<float*>(nullptr));
    case DataType::Double: return f(static_cast<double*>(nullptr));
    case DataType::Bfloat16: return f(static_cast<__nv_bfloat16*>(nullptr));
  }
  return cudaErrorInvalidValue;
}

__global__ void delay_kernel(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

}  // namespace

cudaError_t launch_delay(double us, cudaStream_t s) {
  delay_kernel<<<1, 1, 0, s>>>(static_cast<unsigned long long>(us * 1000.0));
  return cudaGetLastError();
}

cudaError_t launch_fill(void* buf, DataType type, std::size_t count, RedOp op, int rank, cudaStream_t s) {
  if (count == 0) return cudaSuccess;
  return dispatch(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    fill_kernel<T><<<grid_for(count), 256, 0, s>>>(static_cast<T*>(buf), count, op, rank);
    return cudaGetLastError();
  });
}

cudaError_t launch_verify(const void* buf, std::size_t count, const VerifyArgs& args, unsigned long long* wrong,
                          cudaStream_t s) {
  if (count == 0) return cudaSuccess;
  return dispatch(args.type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    verify_kernel<T><<<grid_for(count), 256, 0, s>>>(static_cast<const T*>(buf), count, args, wrong);
    return cudaGetLastError();
  });
}

}  // namespace fabscope::bench::gpu
