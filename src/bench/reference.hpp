#pragma once
// The reference check: what every output element must hold, computed from the formula that
// initialised the inputs, so neither the host nor the GPU ever builds an expected buffer
// (a 4 GB sweep would need another 4 GB per GPU). Compiled by the host compiler (unit tests)
// and by nvcc (the verification kernel) alike.
//
// Inputs are small integers: exact in every type, and sums stay exact in half up to 512 ranks
// and in bfloat16 up to 64, so most checks compare exactly. The expected value of a reduction
// over n ranks is O(1) per element whatever n: the input depends on the rank only through
// rank % 5 (rank % 8 for prod), so counting ranks per residue is enough.
#include <cstddef>
#include <cstdint>

#include "bench/collectives.hpp"
#include "bench/types.hpp"

#if defined(__CUDACC__)
#define FABSCOPE_HD __host__ __device__
#else
#define FABSCOPE_HD
#endif

namespace fabscope::bench::ref {

// The value rank `rank` puts at element `index` of its input buffer, before conversion to the
// element type. prod uses mostly ones and a few twos so products stay exact powers of two.
FABSCOPE_HD inline int input_value(RedOp op, int rank, std::size_t index) {
  if (op == RedOp::Prod) return ((index + static_cast<std::size_t>(rank)) % 8 == 0) ? 2 : 1;
  return static_cast<int>((index % 5) * 3 % 5 + static_cast<std::size_t>(rank % 5) * 2 + 1) % 5;
}

// Ranks r in [0, n) with r % m == c.
FABSCOPE_HD inline std::int64_t ranks_with_residue(int n, int m, int c) {
  return n / m + (c < n % m ? 1 : 0);
}

// Two's-complement wrap of an integer result to the element type (NCCL's integer arithmetic).
FABSCOPE_HD inline double wrap_to_type(std::int64_t v, DataType t) {
  switch (t) {
    case DataType::Int8: return static_cast<double>(static_cast<std::int8_t>(static_cast<std::uint8_t>(v & 0xff)));
    case DataType::Uint8: return static_cast<double>(static_cast<std::uint8_t>(v & 0xff));
    case DataType::Int32: return static_cast<double>(static_cast<std::int32_t>(static_cast<std::uint32_t>(v & 0xffffffffLL)));
    case DataType::Uint32: return static_cast<double>(static_cast<std::uint32_t>(v & 0xffffffffLL));
    case DataType::Int64: return static_cast<double>(v);
    case DataType::Uint64: return static_cast<double>(static_cast<std::uint64_t>(v));
    case DataType::Half:
      // Past half's largest finite value (65504) the result is infinite.
      return v > 65504 ? __builtin_huge_val() : static_cast<double>(v);
    default: return static_cast<double>(v);
  }
}

FABSCOPE_HD inline std::size_t type_bytes(DataType t) {
  switch (t) {
    case DataType::Int8: case DataType::Uint8: return 1;
    case DataType::Half: case DataType::Bfloat16: return 2;
    case DataType::Int32: case DataType::Uint32: case DataType::Float: return 4;
    default: return 8;
  }
}

FABSCOPE_HD inline bool is_float_type(DataType t) {
  return t == DataType::Half || t == DataType::Float || t == DataType::Double ||
         t == DataType::Bfloat16;
}

// The reduction of input_value over ranks [0, n) at `index`, in the element type's arithmetic.
FABSCOPE_HD inline double reduced_value(RedOp op, DataType t, int n, std::size_t index) {
  if (op == RedOp::Prod) {
    // Twos come from ranks r with (index + r) % 8 == 0.
    int first = static_cast<int>((8 - index % 8) % 8);
    int twos = first < n ? (n - 1 - first) / 8 + 1 : 0;
    if (twos >= 63) return is_float_type(t) ? __builtin_huge_val() : 0.0;
    return wrap_to_type(static_cast<std::int64_t>(1) << twos, t);
  }
  std::int64_t sum = 0;
  int lo = 5, hi = -1;
  for (int c = 0; c < 5 && c < n; ++c) {
    int v = input_value(op, c, index);  // depends on the rank only through rank % 5
    sum += ranks_with_residue(n, 5, c) * v;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  switch (op) {
    case RedOp::Max: return hi;
    case RedOp::Min: return lo;
    case RedOp::Avg: {
      if (is_float_type(t)) return static_cast<double>(sum) / n;
      // Integers: sum in the type, then divide (C truncation), as NCCL's integer average does.
      double wrapped = wrap_to_type(sum, t);
      return static_cast<double>(static_cast<std::int64_t>(wrapped) / n);
    }
    default: return wrap_to_type(sum, t);
  }
}

// collectives.cpp's alltoallv_peer_bytes, here for the GPU verifier (same arithmetic).
FABSCOPE_HD inline std::uint64_t alltoallv_bytes(int from, int to, int n, std::uint64_t total_bytes) {
  const std::uint64_t align = ~static_cast<std::uint64_t>(15);
  if (n <= 1) return total_bytes & align;
  int distance = ((to - from) % n + n) % n;
  double sum_distances = static_cast<double>(n) * (n - 1) / 2.0;
  double bytes = static_cast<double>(distance) * static_cast<double>(total_bytes) / sum_distances;
  return static_cast<std::uint64_t>(bytes) & align;
}

struct Expectation {
  bool checked = false;  // false: the element is undefined on this rank (reduce, non-root)
  double value = 0;
};

// What element `i` of rank `rank`'s output buffer must hold after the collective.
// per_rank: the plan's param_count (elements per rank block for gather/scatter/alltoall(v)).
FABSCOPE_HD inline Expectation expected(Collective c, RedOp op, DataType t, int n, int rank,
                                        int root, std::size_t per_rank, std::size_t i) {
  const std::size_t elem_bytes = type_bytes(t);
  Expectation e;
  e.checked = true;
  // Collectives without an operator are initialised with the sum pattern.
  RedOp in_op = (c == Collective::AllReduce || c == Collective::ReduceScatter ||
                 c == Collective::Reduce)
                    ? op
                    : RedOp::Sum;
  switch (c) {
    case Collective::AllReduce: e.value = reduced_value(op, t, n, i); break;
    case Collective::Reduce:
      if (rank != root) e.checked = false;
      else e.value = reduced_value(op, t, n, i);
      break;
    case Collective::ReduceScatter:
      e.value = reduced_value(op, t, n, static_cast<std::size_t>(rank) * per_rank + i);
      break;
    case Collective::Broadcast: e.value = input_value(in_op, root, i); break;
    case Collective::AllGather:
      e.value = per_rank ? input_value(in_op, static_cast<int>(i / per_rank), i % per_rank) : 0;
      break;
    case Collective::AlltoAll:
      e.value = per_rank ? input_value(in_op, static_cast<int>(i / per_rank),
                                       static_cast<std::size_t>(rank) * per_rank + i % per_rank)
                         : 0;
      break;
    case Collective::SendRecv: e.value = input_value(in_op, (rank - 1 + n) % n, i); break;
    case Collective::Gather:
      if (rank != root) e.checked = false;
      else e.value = per_rank ? input_value(in_op, static_cast<int>(i / per_rank), i % per_rank) : 0;
      break;
    case Collective::Scatter:
      e.value = input_value(in_op, root, static_cast<std::size_t>(rank) * per_rank + i);
      break;
    case Collective::HyperCube:
      e.value = per_rank ? input_value(in_op, static_cast<int>(i / per_rank), i % per_rank) : 0;
      break;
    case Collective::AlltoAllv: {
      // The output is the segments of every source in rank order; source s's segment for this
      // rank starts where its segments for ranks below this one end.
      std::uint64_t total = static_cast<std::uint64_t>(per_rank) * n * elem_bytes;
      std::size_t start = 0;
      e.checked = false;
      for (int s = 0; s < n && elem_bytes; ++s) {
        std::size_t len = alltoallv_bytes(s, rank, n, total) / elem_bytes;
        if (i < start + len) {
          std::size_t src_offset = 0;
          for (int k = 0; k < rank; ++k) src_offset += alltoallv_bytes(s, k, n, total) / elem_bytes;
          e.checked = true;
          e.value = input_value(in_op, s, src_offset + (i - start));
          break;
        }
        start += len;
      }
      break;
    }
  }
  return e;
}

// The input operator a collective's buffers are initialised with (see expected()).
FABSCOPE_HD inline RedOp input_op(Collective c, RedOp op) {
  return (c == Collective::AllReduce || c == Collective::ReduceScatter || c == Collective::Reduce)
             ? op
             : RedOp::Sum;
}

// Allowed absolute difference. Integers and exact float results compare exactly; an average,
// or a sum past the type's exact-integer range, may round (NCCL's float average multiplies each
// input by 1/n before summing).
FABSCOPE_HD inline double tolerance(DataType t, RedOp op, int n, double expected_value) {
  if (!is_float_type(t)) return 0;
  double eps = 0, exact = 0;
  switch (t) {
    case DataType::Half: eps = 1.0 / 1024; exact = 2048; break;
    case DataType::Bfloat16: eps = 1.0 / 128; exact = 256; break;
    case DataType::Float: eps = 1.0 / 8388608; exact = 16777216.0; break;
    default: eps = 1.0 / 4503599627370496.0; exact = 9007199254740992.0; break;
  }
  double mag = expected_value < 0 ? -expected_value : expected_value;
  if (op != RedOp::Avg && mag <= exact) return 0;
  return eps * n * (mag > 1 ? mag : 1);
}

FABSCOPE_HD inline bool matches(double got, double want, double tol) {
  if (got == want) return true;  // also +inf == +inf
  double d = got - want;
  if (d < 0) d = -d;
  return d <= tol;  // false for NaN (the sentinel an unwritten element keeps)
}

}  // namespace fabscope::bench::ref
