#include "bench/gpu/nccl_calls.hpp"

#include <string>

#include "core/error.hpp"

namespace fabscope::bench::gpu {

ncclDataType_t nccl_type(DataType t) {
  switch (t) {
    case DataType::Int8: return ncclInt8;
    case DataType::Uint8: return ncclUint8;
    case DataType::Int32: return ncclInt32;
    case DataType::Uint32: return ncclUint32;
    case DataType::Int64: return ncclInt64;
    case DataType::Uint64: return ncclUint64;
    case DataType::Half: return ncclFloat16;
    case DataType::Float: return ncclFloat32;
    case DataType::Double: return ncclFloat64;
    case DataType::Bfloat16: return ncclBfloat16;
  }
  return ncclFloat32;
}

ncclRedOp_t nccl_op(RedOp op) {
  switch (op) {
    case RedOp::Sum: return ncclSum;
    case RedOp::Prod: return ncclProd;
    case RedOp::Max: return ncclMax;
    case RedOp::Min: return ncclMin;
    case RedOp::Avg: return ncclAvg;
  }
  return ncclSum;
}

void RankCalls::fail(ncclResult_t rc, const char* function) const {
  std::string what = std::string(function) + " (" + std::string(collective_) + ")";
  throw Error(nccl_error(api_, rc, comm_, what.c_str()) + " on rank " + std::to_string(rank_));
}

void RankCalls::all_reduce(const void* send, void* recv, std::size_t count) {
  check(api_.AllReduce(send, recv, count, type_, op_, comm_, stream_), "ncclAllReduce");
}
void RankCalls::all_gather(const void* send, void* recv, std::size_t count) {
  check(api_.AllGather(send, recv, count, type_, comm_, stream_), "ncclAllGather");
}
void RankCalls::reduce_scatter(const void* send, void* recv, std::size_t count) {
  check(api_.ReduceScatter(send, recv, count, type_, op_, comm_, stream_), "ncclReduceScatter");
}
void RankCalls::broadcast(const void* send, void* recv, std::size_t count, int root) {
  check(api_.Broadcast(send, recv, count, type_, root, comm_, stream_), "ncclBroadcast");
}
void RankCalls::reduce(const void* send, void* recv, std::size_t count, int root) {
  check(api_.Reduce(send, recv, count, type_, op_, root, comm_, stream_), "ncclReduce");
}
void RankCalls::alltoall(const void* send, void* recv, std::size_t count) {
  check(api_.AlltoAll(send, recv, count, type_, comm_, stream_), "ncclAlltoAll");
}
void RankCalls::gather(const void* send, void* recv, std::size_t count, int root) {
  check(api_.Gather(send, recv, count, type_, root, comm_, stream_), "ncclGather");
}
void RankCalls::scatter(const void* send, void* recv, std::size_t count, int root) {
  check(api_.Scatter(send, recv, count, type_, root, comm_, stream_), "ncclScatter");
}
void RankCalls::send(const void* buf, std::size_t count, int peer) {
  check(api_.Send(buf, count, type_, peer, comm_, stream_), "ncclSend");
}
void RankCalls::recv(void* buf, std::size_t count, int peer) {
  check(api_.Recv(buf, count, type_, peer, comm_, stream_), "ncclRecv");
}
void RankCalls::group_start() { check(api_.GroupStart(), "ncclGroupStart"); }
void RankCalls::group_end(bool after_error) {
  ncclResult_t rc = api_.GroupEnd();
  if (!after_error) check(rc, "ncclGroupEnd");
}
void RankCalls::copy(void* dst, const void* src, std::size_t bytes) {
  cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_);
  if (e != cudaSuccess)
    throw Error("cudaMemcpyAsync (" + std::string(collective_) + ") on rank " + std::to_string(rank_) + ": " +
                cudaGetErrorString(e));
}

}  // namespace fabscope::bench::gpu
