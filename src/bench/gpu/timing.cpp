// The harness: one loop for every collective descriptor. Per size and placement it sets the
// inputs, warms up, times batches (optionally one CUDA graph per batch) until the stop rule is
// met, then checks one call's result against the reference (nccl-tests' order). What a collective calls is its descriptor's (call table,
// collectives.cpp); nothing here depends on which collective runs.
#include <algorithm>
#include <cstring>
#include <optional>

#include "bench/buffers.hpp"
#include "bench/gpu/kernels.hpp"
#include "bench/gpu/nccl_calls.hpp"
#include "bench/gpu/session.hpp"
#include "bench/reference.hpp"
#include "core/error.hpp"

namespace fabscope::bench::gpu {

// One operation per iteration on every local rank, stage by stage. Each iteration's buffers
// move by a whole footprint (nccl-tests' offset rotation through the allocation, against cache
// effects). One rank per process calls NCCL directly, as nccl-tests does with one GPU per
// thread; a group is needed only to drive several GPUs from one thread.
void GpuSession::issue(bool in_place, int iterations, int skip_rank, std::chrono::steady_clock::time_point* first_done,
                       bool events) {
  const auto& d = describe(opts_.collective);
  const std::size_t ts = type_size(opts_.type);
  const ncclDataType_t type = nccl_type(opts_.type);
  const ncclRedOp_t op = nccl_op(opts_.op);
  const Rotation rot = rotation(ranks_.front().plan, ts, ranks_.front().send_cap, ranks_.front().recv_cap);
  const int stages = call_stages(d, nranks_);
  const bool group = ranks_.size() > 1;
  for (int it = 0; it < iterations; ++it) {
    const std::size_t shift = rot.offset(iter_);
    ++iter_;
    if (events)
      for (auto& r : ranks_) {
        if (group) set_device(r);
        cuda_check(cudaEventRecord(r.iter_events[it], r.stream), "cudaEventRecord");
      }
    for (int stage = 0; stage < stages; ++stage) {
      if (group) nccl_check(nccl_.GroupStart(), nullptr, "ncclGroupStart");
      for (auto& r : ranks_) {
        if (r.rank == skip_rank) continue;
        const BufferPlan& p = r.plan;
        CallArgs a;
        a.send = (in_place ? r.recv + p.inplace_send_offset * ts : r.send) + shift;
        a.recv = (in_place ? r.recv + p.inplace_recv_offset * ts : r.recv) + shift;
        a.count = p.param_count;
        a.elem_bytes = ts;
        a.rank = r.rank;
        a.nranks = nranks_;
        a.root = opts_.root;
        a.stage = stage;
        RankCalls calls(nccl_, r.comm, r.stream, type, op, r.rank, d.name);
        // A staged operation may copy on the rank's stream (hypercube's first stage): its device
        // must be current. NCCL calls need no current device.
        if (group && stages > 1) set_device(r);
        d.call(calls, a);
      }
      if (group) nccl_check(nccl_.GroupEnd(), nullptr, "ncclGroupEnd");
    }
    if (it == 0 && first_done) *first_done = std::chrono::steady_clock::now();
  }
  if (events)
    for (auto& r : ranks_) {
      if (group) set_device(r);
      cuda_check(cudaEventRecord(r.iter_events[iterations], r.stream), "cudaEventRecord");
    }
}

void GpuSession::fill_inputs(bool in_place) {
  const Options& o = opts_;
  std::size_t ts = type_size(o.type);
  RedOp in_op = ref::input_op(o.collective, o.op);
  for (auto& r : ranks_) {
    set_device(r);
    const BufferPlan& p = r.plan;
    char* input = in_place ? r.recv + p.inplace_send_offset * ts : r.send;
    std::size_t out_elems = in_place ? p.inplace_elements() : p.recv_count;
    // 0xff bytes: NaN in every float type and -1 / all-ones in the integer ones, values the
    // reference never expects, so an element NCCL did not write counts as wrong.
    cuda_check(cudaMemsetAsync(r.recv, 0xff, std::max<std::size_t>(out_elems * ts, 1), r.stream), "cudaMemsetAsync");
    cuda_check(gpu::launch_fill(input, o.type, p.send_count, in_op, r.rank, r.stream), "init kernel");
    cuda_check(cudaMemsetAsync(r.d_wrong, 0, sizeof(unsigned long long), r.stream), "cudaMemsetAsync");
  }
}

std::int64_t GpuSession::check(bool in_place) {
  const Options& o = opts_;
  const auto& d = describe(o.collective);
  std::size_t ts = type_size(o.type);
  iter_ = 0;  // the checked iteration uses the buffers' start
  fill_inputs(in_place);
  issue(in_place, 1, -1);
  for (auto& r : ranks_) {
    set_device(r);
    const BufferPlan& p = r.plan;
    const char* out = in_place ? r.recv + p.inplace_recv_offset * ts : r.recv;
    gpu::VerifyArgs a{o.collective, o.op, o.type, nranks_, r.rank, o.root, p.param_count};
    cuda_check(gpu::launch_verify(out, p.recv_count, a, r.d_wrong, r.stream), "verify kernel");
    cuda_check(cudaMemcpyAsync(r.h_wrong, r.d_wrong, sizeof(unsigned long long), cudaMemcpyDeviceToHost, r.stream),
               "cudaMemcpyAsync");
  }
  wait_all(std::string(d.name) + " check");
  std::vector<std::vector<double>> vals;
  for (auto& r : ranks_) vals.push_back({static_cast<double>(*r.h_wrong)});
  return static_cast<std::int64_t>(reduce(vals, ncclSum, "reduction of #wrong")[0]);
}

void GpuSession::capture(bool in_place, int iterations) {
  drop_graphs();
  for (auto& r : ranks_) {
    set_device(r);
    cuda_check(cudaStreamBeginCapture(r.stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  }
  // End every capture before instantiating: in thread-local capture mode the thread may not
  // instantiate while one of its streams is still capturing.
  std::vector<cudaGraph_t> graphs(ranks_.size(), nullptr);
  std::string failure;
  try {
    issue(in_place, iterations, -1);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    set_device(ranks_[i]);
    cudaError_t e = cudaStreamEndCapture(ranks_[i].stream, &graphs[i]);
    if (e != cudaSuccess && failure.empty()) failure = std::string("cudaStreamEndCapture: ") + cudaGetErrorString(e);
  }
  for (std::size_t i = 0; i < ranks_.size() && failure.empty(); ++i) {
    set_device(ranks_[i]);
    cudaError_t e = cudaGraphInstantiate(&ranks_[i].graph, graphs[i], 0);
    if (e != cudaSuccess) failure = std::string("cudaGraphInstantiate: ") + cudaGetErrorString(e);
  }
  for (auto g : graphs)
    if (g) cudaGraphDestroy(g);
  if (!failure.empty()) throw Error("CUDA graph capture: " + failure);
}

void GpuSession::drop_graphs() {
  for (auto& r : ranks_)
    if (r.graph) {
      cudaGraphExecDestroy(r.graph);
      r.graph = nullptr;
    }
}

// A timed batch in three steps. prepare: the per-iteration events and, for the GPU timer, the
// spin kernel ahead of the start event. launch: the clock readings around queueing the batch
// and waiting for it. collect: the per-call times, combined over ranks.
void GpuSession::prepare_batch(int iterations, bool graph) {
  if (opts_.per_iter && !graph) {
    for (auto& r : ranks_) {
      set_device(r);
      while (r.iter_events.size() < static_cast<std::size_t>(iterations) + 1) {
        cudaEvent_t e;
        cuda_check(cudaEventCreate(&e), "cudaEventCreate");
        r.iter_events.push_back(e);
      }
    }
  }
  if (opts_.timer == Timer::Gpu) {
    // A short spin kernel ahead of the start event: the GPU reaches the start event only after
    // the CPU has queued the first operation, so the launch latency of that operation is not
    // timed (the GPU-only time; --timer wall is nccl-tests' time, launch cost included).
    for (auto& r : ranks_) {
      set_device(r);
      cuda_check(gpu::launch_delay(delay_us_, r.stream), "delay kernel");
    }
  }
}

GpuSession::BatchClock GpuSession::launch_batch(bool in_place, int iterations, bool graph, int skip_rank,
                                                const std::string& step) {
  const bool gpu_timer = opts_.timer == Timer::Gpu;
  const bool events = opts_.per_iter && !graph;
  BatchClock c;
  // nccl-tests' timer: the host clock from before the first launch to the moment the host sees
  // the batch complete, so the cost of issuing each call is in the time as an application sees it.
  c.start = std::chrono::steady_clock::now();
  c.first = c.start;
  if (gpu_timer) {
    for (auto& r : ranks_) {
      set_device(r);
      cuda_check(cudaEventRecord(r.start, r.stream), "cudaEventRecord");
    }
  }
  if (graph) {
    for (int g = 0; g < graph_launches_; ++g) {
      for (auto& r : ranks_) {
        if (ranks_.size() > 1) set_device(r);
        cuda_check(cudaGraphLaunch(r.graph, r.stream), "cudaGraphLaunch");
      }
      if (g == 0) c.first = std::chrono::steady_clock::now();
    }
  } else {
    issue(in_place, iterations, skip_rank, &c.first, events);
  }
  c.queued = std::chrono::steady_clock::now();
  if (gpu_timer) {
    for (auto& r : ranks_) {
      set_device(r);
      cuda_check(cudaEventRecord(r.stop, r.stream), "cudaEventRecord");
    }
    // Next batch: cover twice the time it took to queue the start events and the first operation.
    double queued_us = std::chrono::duration<double, std::micro>(c.first - c.start).count();
    delay_us_ = std::clamp(2 * queued_us + kDelaySlackUs, kDelayMinUs, kDelayMaxUs);
  }
  wait_all(step, /*spin=*/!gpu_timer);
  c.done = std::chrono::steady_clock::now();
  return c;
}

BatchTime GpuSession::collect_batch(int iterations, bool graph, const BatchClock& c, const std::string& step) {
  const bool gpu_timer = opts_.timer == Timer::Gpu;
  BatchTime bt;
  std::vector<double> per_rank;
  for (auto& r : ranks_) {
    if (gpu_timer) {
      float ms = 0;
      cuda_check(cudaEventElapsedTime(&ms, r.start, r.stop), "cudaEventElapsedTime");
      per_rank.push_back(static_cast<double>(ms) * 1000.0 / iterations);
    } else {
      per_rank.push_back(std::chrono::duration<double, std::micro>(c.done - c.start).count() / iterations);
    }
  }
  bt.time_us = combine(per_rank, "reduction of batch times after " + step);
  if (!gpu_timer) {
    std::vector<double> cpu(ranks_.size(),
                            std::chrono::duration<double, std::micro>(c.queued - c.start).count() / iterations);
    bt.cpu_us = combine(cpu, "reduction of queueing times after " + step);
  }
  if (opts_.per_iter && !graph) {
    // Each iteration's time: the largest over the local ranks, then over every rank.
    std::vector<std::vector<double>> it(ranks_.size(), std::vector<double>(iterations));
    for (std::size_t i = 0; i < ranks_.size(); ++i) {
      for (int k = 0; k < iterations; ++k) {
        float ms = 0;
        cuda_check(cudaEventElapsedTime(&ms, ranks_[i].iter_events[k], ranks_[i].iter_events[k + 1]),
                   "cudaEventElapsedTime");
        it[i][k] = static_cast<double>(ms) * 1000.0;
      }
    }
    bt.iter_us = reduce_iter_max(std::move(it), "reduction of per-iteration times after " + step);
  }
  return bt;
}

BatchTime GpuSession::timed_batch(bool in_place, int iterations, bool graph, int skip_rank, const std::string& step) {
  prepare_batch(iterations, graph);
  BatchClock c = launch_batch(in_place, iterations, graph, skip_rank, step);
  return collect_batch(iterations, graph, c, step);
}


Timing GpuSession::measure(const SizeResult& res, bool in_place, bool& hang_armed) {
  const Options& o = opts_;
  const auto& d = describe(o.collective);
  std::string what = std::string(d.name) + " " + std::to_string(res.bytes) + " B " + (in_place ? "in-place" : "out-of-place");
  iter_ = 0;
  // nccl-tests' order (BenchTime): the inputs are set before the untimed iterations, the
  // result is checked after the timing.
  const bool checked = o.check && (!in_place || d.in_place_checked);
  if (checked) fill_inputs(in_place);
  const StopRule& rule = o.stop;
  int skip = -1;
  if (hang_armed) {  // test hook: one rank leaves the others waiting in the first timed batch
    skip = o.debug_hang_rank;
    hang_armed = false;
  }
  int k;
  if (rule.adaptive) {
    double first = timed_batch(in_place, 1, false, skip, what + ", first iteration").time_us;
    int warm = o.warmup_explicit ? o.stop.fixed_warmup : warmup_iterations(rule, first);
    // The warm-up is timed too (not kept): a better estimate than the cold first iteration.
    double est_us = warm > 0 ? timed_batch(in_place, warm, false, -1, what + ", warm-up").time_us : first;
    k = batch_iterations(rule, est_us);
  } else {
    issue(in_place, rule.fixed_warmup, skip);
    wait_all(what + ", warm-up");
    k = rule.fixed_iters;
  }
  if (o.graphs) {
    // Graphs of at most kMaxGraphIters operations, launched as often as the batch needs:
    // capturing thousands of NCCL calls costs seconds.
    constexpr int kMaxGraphIters = 256;
    int per_graph = std::min(k, kMaxGraphIters);
    graph_launches_ = (k + per_graph - 1) / per_graph;
    k = per_graph * graph_launches_;
    capture(in_place, per_graph);
    for (auto& r : ranks_) {
      set_device(r);
      cuda_check(cudaGraphLaunch(r.graph, r.stream), "cudaGraphLaunch");
    }
    wait_all(what + ", graph warm-up");
  }
  iter_ = 0;  // timed iterations start at the buffers' start, as nccl-tests' do
  Estimator est(rule);
  double cpu_sum = 0;
  std::vector<double> iter_us;
  while (!est.done()) {
    BatchTime bt = timed_batch(in_place, k, o.graphs, -1, what);
    est.add_batch(bt.time_us, k);
    cpu_sum += bt.cpu_us * k;
    iter_us.insert(iter_us.end(), bt.iter_us.begin(), bt.iter_us.end());
  }
  drop_graphs();
  std::optional<std::int64_t> wrong;
  if (checked) wrong = check(in_place);
  Timing t = make_timing(d, nranks_, algbw_bytes(d, ranks_.front().plan, type_size(o.type), nranks_), est.mean_us());
  t.wrong = wrong;
  t.iterations = est.iterations();
  t.batches = est.batches();
  t.rel_ci = est.rel_ci();
  if (o.timer == Timer::Wall && t.iterations > 0) t.cpu_time_us = cpu_sum / static_cast<double>(t.iterations);
  if (o.per_iter) t.per_iter = iter_stats(std::move(iter_us), o.per_iter_skip);
  return t;
}

}  // namespace fabscope::bench::gpu
