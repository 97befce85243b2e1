#pragma once
// The descriptors' NCCL calls (collectives.hpp: NcclCalls) bound to one rank of a session: its
// communicator and stream, the run's element type and operator. Built per operation on the
// stack: a handful of stores, no allocation.
#include <string_view>

#include "bench/collectives.hpp"
#include "bench/gpu/nccl_api.hpp"
#include "bench/types.hpp"

namespace fabscope::bench::gpu {

ncclDataType_t nccl_type(DataType t);
ncclRedOp_t nccl_op(RedOp op);

class RankCalls final : public NcclCalls {
 public:
  // collective: its name, for error messages ("ncclSend (alltoall) failed: ... on rank 3").
  RankCalls(const NcclApi& api, ncclComm_t comm, cudaStream_t stream, ncclDataType_t type, ncclRedOp_t op,
            int rank, std::string_view collective)
      : api_(api), comm_(comm), stream_(stream), type_(type), op_(op), rank_(rank), collective_(collective) {}

  void all_reduce(const void* send, void* recv, std::size_t count) override;
  void all_gather(const void* send, void* recv, std::size_t count) override;
  void reduce_scatter(const void* send, void* recv, std::size_t count) override;
  void broadcast(const void* send, void* recv, std::size_t count, int root) override;
  void reduce(const void* send, void* recv, std::size_t count, int root) override;
  bool has_alltoall() const override { return api_.AlltoAll != nullptr; }
  bool has_gather_scatter() const override { return api_.Gather && api_.Scatter; }
  void alltoall(const void* send, void* recv, std::size_t count) override;
  void gather(const void* send, void* recv, std::size_t count, int root) override;
  void scatter(const void* send, void* recv, std::size_t count, int root) override;
  void send(const void* buf, std::size_t count, int peer) override;
  void recv(void* buf, std::size_t count, int peer) override;
  void group_start() override;
  void group_end(bool after_error) override;
  void copy(void* dst, const void* src, std::size_t bytes) override;

 private:
  // ncclInProgress counts as success (non-blocking communicators).
  void check(ncclResult_t rc, const char* function) const {
    if (rc != ncclSuccess && rc != ncclInProgress) fail(rc, function);
  }
  [[noreturn]] void fail(ncclResult_t rc, const char* function) const;

  const NcclApi& api_;
  ncclComm_t comm_;
  cudaStream_t stream_;
  ncclDataType_t type_;
  ncclRedOp_t op_;
  int rank_;
  std::string_view collective_;
};

}  // namespace fabscope::bench::gpu
