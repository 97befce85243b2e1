#include "rdma/size_protocol.hpp"

namespace fabscope::rdma {

void SizeProtocol::send_progress(std::uint64_t n) { ctl_.send(json{{"progress", n}}, wd_); }

void SizeProtocol::send_sent(std::uint64_t n) { ctl_.send(json{{"sent", n}}, wd_); }

void SizeProtocol::send_done(const SizeResult& r, std::uint64_t sent_messages) {
  json d = r;
  d["sent_messages"] = sent_messages;
  ctl_.send(json{{"done", d}}, wd_);
}

void SizeProtocol::take() {
  while (auto m = ctl_.poll()) absorb(*m);
}

const json& SizeProtocol::await_done() {
  while (peer_done_.is_null()) absorb(ctl_.recv(wd_));
  return peer_done_;
}

void SizeProtocol::absorb(const json& m) {
  if (m.contains("sent")) peer_sent_ = int_at<std::uint64_t>(m, "sent");
  if (m.contains("done")) {
    peer_done_ = m["done"];
    if (!peer_sent_) peer_sent_ = int_or<std::uint64_t>(peer_done_, "sent_messages", 0);
  }
}

}  // namespace fabscope::rdma
