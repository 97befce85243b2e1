#pragma once
// Which MAD to send next: one FIFO queue per destination (a LID, or a directed route) and a
// rotation over the destinations that have something queued and fewer than `limit` outstanding.
// A switch answers its management packets one at a time in its management processor, so a window
// of MADs in flight that sits on one switch (its 128 counter queries back to back) waits on that
// switch while the others idle; taken in turn, the window spreads over as many destinations as it
// has slots. The MAD engine (umad.hpp) holds the global limit and counts outstanding MADs through
// next() and done(); nothing here knows about MADs (a unit test drives it with plain values).
#include <algorithm>
#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace fabscope::fabric {

template <typename T>
class DestinationQueues {
 public:
  struct Item {
    std::string dest;
    T value;
  };

  // At most `limit` outstanding per destination (at least 1). Change it only while nothing is
  // outstanding (between engine runs).
  void set_limit(int limit) { limit_ = std::max(1, limit); }
  int limit() const { return limit_; }

  void push(const std::string& dest, T value) {
    Dest& d = dests_[dest];
    if (d.name.empty()) d.name = dest;
    d.queue.push_back(std::move(value));
    ++queued_;
    if (!d.in_rotation) enter(d);
  }

  // The next value to send, from the destination whose turn it is; nullopt when every destination
  // with something queued already has `limit` outstanding (or nothing is queued). The value counts
  // as outstanding at its destination until done(dest).
  std::optional<Item> next() {
    while (!rotation_.empty()) {
      Dest& d = *rotation_.front();
      rotation_.pop_front();
      d.in_rotation = false;
      // Full or empty: out of the rotation until done() frees a slot or push() brings work.
      if (d.queue.empty() || d.outstanding >= limit_) continue;
      Item it{d.name, std::move(d.queue.front())};
      d.queue.pop_front();
      --queued_;
      ++d.outstanding;
      if (!d.queue.empty() && d.outstanding < limit_) enter(d);  // to the back: the others go first
      return it;
    }
    return std::nullopt;
  }

  // One outstanding value of dest was answered or given up on (retries of the same MAD keep its
  // slot: done() once per value from next()).
  void done(const std::string& dest) {
    auto f = dests_.find(dest);
    if (f == dests_.end()) return;
    Dest& d = f->second;
    if (d.outstanding > 0) --d.outstanding;
    if (!d.in_rotation && !d.queue.empty()) enter(d);
  }

  bool empty() const { return queued_ == 0; }          // nothing queued (outstanding not counted)
  std::size_t queued() const { return queued_; }
  int outstanding(const std::string& dest) const {
    auto f = dests_.find(dest);
    return f == dests_.end() ? 0 : f->second.outstanding;
  }

 private:
  struct Dest {
    std::string name;
    std::deque<T> queue;
    int outstanding = 0;
    bool in_rotation = false;
  };
  void enter(Dest& d) {
    d.in_rotation = true;
    rotation_.push_back(&d);
  }

  int limit_ = 1;
  std::size_t queued_ = 0;
  std::unordered_map<std::string, Dest> dests_;  // node-based: the rotation's pointers stay valid
  std::deque<Dest*> rotation_;
};

}  // namespace fabscope::fabric
