#pragma once
// The management library opened with dlopen (libibumad.so.3), the choice of the local port, and
// a small MAD engine on libibumad: many requests in flight (bounded), distinct transaction ids, a
// timeout and retries per MAD, replies matched back to their request. Discovery, counters, SMInfo
// and forwarding tables all go through it. Only compiled where the -dev header exists
// (FABSCOPE_UMAD_HEADERS); without it the sweep says the build lacks it.
#if __has_include(<infiniband/umad.h>)
#define FABSCOPE_UMAD_HEADERS 1
#include <infiniband/umad.h>

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "fabric/mad_scheduler.hpp"
#include "fabric/sweep.hpp"

namespace fabscope::fabric {

struct UmadLib {
  int (*init)() = nullptr;
  int (*get_cas_names)(char (*)[UMAD_CA_NAME_LEN], int) = nullptr;
  int (*get_ca)(const char*, umad_ca_t*) = nullptr;
  int (*release_ca)(umad_ca_t*) = nullptr;
  int (*open_port)(const char*, int) = nullptr;
  int (*close_port)(int) = nullptr;
  int (*reg)(int, int, int, std::uint8_t, long*) = nullptr;
  int (*unreg)(int, int) = nullptr;
  int (*send)(int, int, void*, int, int, int) = nullptr;
  int (*recv)(int, void*, int*, int) = nullptr;
  int (*get_fd)(int) = nullptr;
  void* (*get_mad)(void*) = nullptr;
  std::size_t (*size)() = nullptr;
  int (*status)(void*) = nullptr;
  int (*set_addr)(void*, int, int, int, int) = nullptr;
};
// Loads once per process; throws AccessError(NoLibrary) naming the package to install.
const UmadLib& umad_lib();

// The local port the sweep runs from: opt.ca/opt.port, or the first InfiniBand port that is
// Active. Throws AccessError: NoDevice (no RDMA device; RoCE-only), NoPermission (umad device
// not openable), Failed.
struct LocalPort {
  std::string ca;
  int port = 0;
  std::uint16_t lid = 0;
};
LocalPort choose_port(const UmadLib& l, const std::string& ca, int port);

// One MAD to send and what to do with its answer. dlid 0: a directed-route SMP (the path is in
// the MAD), else LID-routed to dlid. Callbacks may submit more requests.
struct MadRequest {
  std::array<std::uint8_t, 256> mad{};
  std::uint16_t dlid = 0;
  std::function<void(std::span<const std::uint8_t>)> on_reply;   // the whole 256-byte MAD
  std::function<void(const std::string& why)> on_fail;           // timed out or error status
};

class MadEngine {
 public:
  // The most MADs in flight, whatever is asked: far more than a fabric's management agents answer
  // at once, and few enough that their answers fit the receive queue.
  static constexpr int kMaxInflight = 256;
  // Opens ca:port and registers SMP (directed route) and PerfMgt agents.
  MadEngine(const UmadLib& l, const LocalPort& p, int timeout_ms, int retries);
  ~MadEngine();
  MadEngine(const MadEngine&) = delete;
  MadEngine& operator=(const MadEngine&) = delete;

  // Queued per destination (destination()): the requests to one destination go in the order
  // submitted, the destinations take turns.
  void submit(MadRequest r);
  // Sends and receives until every submitted request is answered or has failed, with at most
  // max_inflight outstanding in all and max_per_dest at any one destination (a switch's
  // management agent answers one MAD at a time: a window of MADs spread over many switches is
  // answered in parallel, one on a single switch waits in its queue). Throws Error when the local
  // port itself stops answering (the device or simulator went away): that is checked after a run
  // of failures with no reply.
  void run(int max_inflight, int max_per_dest = kDefaultPerDestination);
  // A destination's outstanding MADs by default: bench/RESULTS.md, "MADs scheduled by destination".
  static constexpr int kDefaultPerDestination = 4;
  // Where a MAD goes, as the scheduler's key: "L" and the DLID for a LID-routed MAD (a switch's
  // ports share its LID, so all its counter queries are one destination), "D" and the hops of the
  // initial path for a directed-route SMP (a node reached by two paths counts as two).
  static std::string destination(const MadRequest& r);
  std::uint64_t sent() const { return sent_; }          // MADs sent, retries included
  std::uint64_t timed_out() const { return timed_out_; } // requests unanswered after every retry

 private:
  struct Slot {
    MadRequest req;
    std::string dest;  // "" for the local check (outside the per-destination limit)
    int attempts = 0;
    long long deadline_ms = 0;
  };
  void send(Slot& s, std::uint32_t tid);
  void expire(long long now);
  void receive();
  void failed(Slot s, const std::string& why);
  void check_local();

  const UmadLib& l_;
  LocalPort port_;
  int id_ = -1, fd_ = -1, smp_agent_ = -1, pma_agent_ = -1;
  int timeout_ms_, retries_;
  std::uint32_t next_tid_ = 1;
  DestinationQueues<MadRequest> queue_;
  std::deque<MadRequest> urgent_;  // the local port check: sent before anything queued
  std::unordered_map<std::uint32_t, Slot> inflight_;
  std::vector<std::uint8_t> buf_;
  int fails_in_a_row_ = 0;
  std::uint64_t sent_ = 0, timed_out_ = 0;
};

}  // namespace fabscope::fabric
#endif
