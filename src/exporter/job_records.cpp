#include "exporter/job_records.hpp"

namespace fabscope::exporter {

job::Snapshot job_records(const std::vector<JobProcess>& processes, std::uint64_t now_unix_ns, std::string source) {
  job::Snapshot s;
  s.source = std::move(source);
  for (const auto& p : processes) {
    const auto& seg = p.segment;
    for (const auto& c : seg.comms) {
      if (c.finalized || c.nranks < 1 || c.rank < 0 || c.rank >= c.nranks) continue;
      job::RankRecord r;
      r.job_id = seg.job_id;
      r.host = seg.host;
      r.pid = seg.pid;
      r.alive = p.alive;
      if (p.alive) r.process_state = job_process_state_word(p.state);
      r.now_unix_ns = now_unix_ns;
      r.comm = c.hash_hex();
      r.comm_name = c.name;
      r.rank = c.rank;
      r.nranks = c.nranks;
      r.gpu = c.cuda_device;
      r.bus_id = c.bus_id;
      r.started = c.started;
      r.completed = c.completed;
      r.last_start_unix_ns = c.last_start_unix_ns;
      r.last_done_unix_ns = c.last_done_unix_ns;
      r.ops.reserve(c.ring.size());
      for (const auto& o : c.ring) {
        job::OpRecord op;
        op.seq = o.seq;
        op.op = job_op_name(o.op);
        op.bytes = o.bytes;
        op.cpu_start_unix_ns = o.cpu_start_unix_ns;
        op.gpu_start_ns = o.gpu_start_ns;
        op.gpu_stop_ns = o.gpu_stop_ns;
        op.done_unix_ns = o.done_unix_ns;
        r.ops.push_back(std::move(op));
      }
      for (const auto& pe : c.peers)
        r.peers.push_back({pe.peer, pe.send, pe.steps, pe.bytes, pe.step_ns_sum, pe.wait_ns_sum});
      s.ranks.push_back(std::move(r));
    }
  }
  return s;
}

}  // namespace fabscope::exporter
