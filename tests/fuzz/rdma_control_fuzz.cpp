// libFuzzer target for what a `fabscope rdma` peer sends over the TCP control connection: the
// input is the byte stream, delivered through a real socket pair to Control::recv (line framing,
// the 1 MiB bound, JSON parsing, the peer's {"error"} finding, quoted as rdma.peer_failed), the
// server listener's framing of the first line (before authentication), and every message is read the way
// the client, the server and the engine read it (hello options and endpoint, welcome, QP numbers,
// buffer keys, run/ready/sent/done). A message holding a saved result ("schema": "fabscope.rdma")
// goes through the Result reader and must round-trip.
// Build and run: scripts/fuzz.sh rdma_control (or cmake --preset fuzz; see tests/fuzz/README).
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "rdma/control.hpp"
#include "rdma/engine.hpp"
#include "rdma/findings.hpp"
#include "rdma/types.hpp"

namespace {

using namespace fabscope;
using namespace fabscope::rdma;

// The bounds normalized() promises the engine (it sizes buffers and queues from them).
void check_options(const Options& o) {
  if (o.sizes_bytes.empty() || o.qps < 1 || o.qps > 64 || o.tx_depth < 1 || o.tx_depth > 8192) std::abort();
  for (auto s : o.sizes_bytes)
    if (s < 1 || s > (1ull << 30)) std::abort();
  if (o.iterations < 1 || o.iterations > 1'000'000'000ull) std::abort();
}

// One message as rdma.cpp and size_protocol.cpp take it. Their catch-all turns a std::exception
// (a field of the wrong type) into the rdma.control_lost finding, so that is allowed here too.
void read_message(const json& m) {
  try {
    if (m.contains("hello")) {
      const json& h = m.at("hello");
      (void)h.value("magic", std::string());
      (void)int_or<int>(h, "version", 0);
      Options o = h.at("options").get<Options>();
      try {
        check_options(normalized(o));
      } catch (const UsageError&) {
      }
      (void)h.at("endpoint").get<Endpoint>();
    }
    if (m.contains("welcome")) {
      const json& w = m.at("welcome");
      (void)w.at("endpoint").get<Endpoint>();
      (void)w.value("cm_address", std::string());
      for (auto f : w.value("findings", std::vector<Finding>{}))
        if (peer_note(f, "server").severity > Severity::Warn) std::abort();  // a peer never fails us
      (void)w.value("choices", std::vector<Choice>{});
    }
    if (m.contains("qps")) (void)m.at("qps").get<std::vector<QpAddr>>();
    if (m.contains("buf")) (void)m.at("buf").get<BufKey>();
    if (m.contains("run")) (void)int_at<std::uint64_t>(m, "run");
    if (m.contains("ready")) (void)int_at<std::uint64_t>(m, "ready");
    if (m.contains("sent")) (void)int_at<std::uint64_t>(m, "sent");
    if (m.contains("done")) {
      const json& d = m.at("done");
      (void)int_or<std::uint64_t>(d, "sent_messages", 0);
      (void)d.get<SizeResult>();
    }
    if (m.contains("schema")) {
      Result r = m.get<Result>();
      json once = r;
      Result again = once.get<Result>();
      if (json(again) != once) std::abort();
    }
  } catch (const std::exception&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The server's listener frames the first line before anything is authenticated.
  try {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    const std::size_t n = first_line_size(bytes);
    if (n > size || (n && bytes[n - 1] != '\n')) std::abort();
  } catch (const Error&) {
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) std::abort();
  // The whole input waits in the socket, then the writer closes: recv() ends with "closed".
  int big = 4 << 20;
  setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
  fcntl(sv[0], F_SETFL, O_NONBLOCK);
  std::size_t off = 0;
  while (off < size) {
    ssize_t n = write(sv[0], data + off, size - off);
    if (n <= 0) break;  // more than the socket holds: the rest is cut, as a stalled peer would
    off += static_cast<std::size_t>(n);
  }
  close(sv[0]);
  Control ctl(sv[1]);
  Watchdog wd("client", 5);
  wd.begin("fuzz");
  for (int messages = 0;; ++messages) {
    if (messages > static_cast<int>(size)) std::abort();  // each message takes at least its newline
    try {
      read_message(ctl.recv(wd));
    } catch (const PeerFailure& f) {
      // The peer's words are quoted in a finding of ours, bounded; never its id or docs.
      const Finding ours = from_peer(f.finding, "server");
      if (ours.id != "rdma.peer_failed" || ours.message.size() > 400) std::abort();
      break;
    } catch (const Failure& f) {
      if (f.finding.id != "rdma.control_lost") std::abort();  // closed, garbage or too long
      break;
    }
  }
  return 0;
}
