#include <cstdlib>
#include <iostream>

#include "cli/commands.hpp"
#include "core/args.hpp"
#include "core/error.hpp"
#include "core/finding.hpp"
#include "core/strings.hpp"
#include "rdma/rdma.hpp"
#include "rdma/render.hpp"

namespace fabscope::cli {

namespace {

core::ArgParser make_parser() {
  core::ArgParser args(
      "rdma",
      "Point-to-point RDMA bandwidth and latency between two hosts, like perftest (ib_write_bw,\n"
      "ib_read_lat, ...) but with the device, port, GID index and MTU chosen from this node's probe\n"
      "(each choice printed with its reason), RDMA CM connection setup, a watchdog instead of hangs,\n"
      "and failures explained as findings. Run 'fabscope rdma --server' on one host, then\n"
      "'fabscope rdma HOST' on the other; both print results. Flags: docs/rdma.md.");
  args.positional("HOST", "the server's address or name (client mode)")
      .flag("--server", "serve: wait for a client and run the test it asks for")
      .option("--sessions", "N", "server: sessions to serve before exiting (0 = until killed)", "1")
      .option("--bind", "ADDR", "server: listen on this IPv4 address only (default: every address)")
      .option("--test", "bw|lat", "bandwidth or latency", "bw")
      .option("--op", "write|read|send", "RDMA WRITE, RDMA READ or SEND/RECV", "write")
      .multi("-s,--size", "BYTES", "message size (65536, 64K, 8M); repeat for several (default 64K bw, 2 lat)")
      .flag("-a,--all", "every size from 2 B to 8 MiB in powers of two (perftest -a)")
      .option("-n,--iters", "N", "messages per QP and size (default 5000 bw, 1000 lat)")
      .option("-D,--duration", "SEC", "run each size for SEC seconds instead of -n messages")
      .option("-q,--qps", "N", "queue pairs (bw)", "1")
      .option("-t,--tx-depth", "N", "outstanding sends per QP (default 128 bw, 1 lat)")
      .flag("-b,--bidirectional", "both sides send at once (bw); rates are the sum")
      .option("-d,--device", "DEV[:PORT]", "RDMA device and port (default: chosen from the route to HOST)")
      .option("-x,--gid-index", "N", "GID index (default: the RoCE v2 entry holding the route's IPv4 address)")
      .option("-p,--port", "PORT", "TCP control port, also the RDMA CM port", "18515")
      .option("--oob", "cm|tcp", "connect QPs through RDMA CM, or a TCP exchange (perftest's default)", "cm")
      .option("--timeout", "SEC", "abort when nothing moves for SEC seconds (watchdog)", "10")
      .flag("--json", "print the result as JSON (schema fabscope.rdma, docs/formats.md)")
      .choices("test", {"bw", "lat"})
      .choices("op", {"write", "read", "send"})
      .choices("oob", {"cm", "tcp"})
      .example("fabscope rdma --server", "on host A: serve one test on TCP port 18515")
      .example("fabscope rdma 10.0.0.1", "on host B: 64 KiB RDMA WRITE bandwidth to A")
      .example("fabscope rdma 10.0.0.1 --test lat -s 8", "8 B WRITE latency (as ib_write_lat -s 8)")
      .example("fabscope rdma 10.0.0.1 -a --op read -q 4", "READ bandwidth, 2 B to 8 MiB, 4 QPs")
      .example("fabscope rdma 10.0.0.1 -d mlx5_1:1 -x 3 --oob tcp", "fixed device and GID, no RDMA CM")
      .footer(std::string(core::kExitCodesHelp) +
              "\nA failed test (completion error, RDMA CM error, port down, memlock, watchdog) exits 2\n"
              "with findings; bad flags and an unreachable or refusing server exit 3 naming the value.\n"
              "FABSCOPE_RDMA_TOKEN (same value on both sides): the server serves only clients that send it.");
  return args;
}

rdma::Options options_from(const core::ArgParser& a) {
  rdma::Options o;
  o.test = rdma::test_from_string(a.get("test"));
  o.op = rdma::op_from_string(a.get("op"));
  if (a.has("all") && a.has("size")) throw UsageError("rdma: --all and --size exclude each other");
  if (a.has("all")) o.sizes_bytes = rdma::all_sizes();
  for (const auto& s : a.get_all("size")) o.sizes_bytes.push_back(rdma::parse_size(s));
  if (a.has("iters") && a.has("duration")) throw UsageError("rdma: --iters and --duration exclude each other");
  if (a.has("iters")) o.iterations = static_cast<std::uint64_t>(a.get_int("iters", 1, 1'000'000'000));
  if (a.has("duration")) o.duration_s = a.get_double("duration", 0.001, 3600);
  o.qps = static_cast<int>(a.get_int("qps", 1, 64));
  if (a.has("tx-depth")) o.tx_depth = static_cast<int>(a.get_int("tx-depth", 1, 8192));
  o.bidirectional = a.has("bidirectional");
  if (a.has("device")) std::tie(o.device, o.ib_port) = rdma::parse_device(a.get("device"));
  if (a.has("gid-index")) o.gid_index = static_cast<int>(a.get_int("gid-index", 0, 1023));
  o.tcp_port = static_cast<int>(a.get_int("port", 1, 65535));
  o.oob = rdma::oob_from_string(a.get("oob"));
  o.timeout_s = a.get_double("timeout", 0.1, 3600);
  o.bind_address = a.get("bind");
  if (const char* t = std::getenv("FABSCOPE_RDMA_TOKEN")) o.token = t;
  return rdma::normalized(o);
}

void print(const rdma::Result& r, bool as_json) {
  if (as_json)
    std::cout << dump_json(json(r)) << "\n";
  else
    std::cout << rdma::render_text(r) << std::flush;
}

}  // namespace

int cmd_rdma(int argc, char** argv) {
  auto args = make_parser();
  if (!args.parse(argc, argv, std::cout)) return 0;
  rdma::Options o = options_from(args);
  const bool as_json = args.has("json");
  if (args.has("server")) {
    if (!args.positionals().empty())
      throw UsageError("rdma: --server takes no HOST (got '" + args.positionals().front() + "')");
    int sessions = static_cast<int>(args.get_int("sessions", 0, 1'000'000));
    rdma::Server server(o);
    std::cerr << rdma::listening_line(o.bind_address, server.tcp_port()) << std::endl;
    if (o.token.empty())
      std::cerr << "fabscope rdma: no FABSCOPE_RDMA_TOKEN: any client that reaches this port can run a test "
                   "(what it reports is quoted as the client's, docs/rdma.md)"
                << std::endl;
    int worst = 0;
    server.serve(sessions, [&](const rdma::Result& r) {
      // Several sessions with --json: one document per line (JSON Lines).
      if (as_json && sessions != 1)
        std::cout << dump_json(json(r), -1) << std::endl;
      else
        print(r, as_json);
      worst = std::max(worst, exit_code_for(r.findings));
    });
    return worst;
  }
  if (args.positionals().size() != 1)
    throw UsageError("rdma: give the server's HOST, or --server (see fabscope rdma --help)");
  if (args.has("sessions") || args.has("bind")) throw UsageError("rdma: --sessions and --bind are for --server");
  const std::string host = args.positionals().front();
  try {
    rdma::Result r = rdma::run(host, o);
    print(r, as_json);
    return exit_code_for(r.findings);
  } catch (const rdma::Unreachable& u) {
    print(u.result, as_json);
    std::cerr << "fabscope rdma: " << core::printable_lines(u.what()) << "\n";
    return kExitUsage;
  }
}

}  // namespace fabscope::cli
