// `fabscope bench` on the host side: streams the rows, prints the chosen format, writes the
// extra files. Built with or without the GPU side (Session::open says when there is none).
#include "bench/environment.hpp"
#include "bench/nccltests_json.hpp"
#include "bench/output.hpp"
#include "bench/run.hpp"
#include "core/error.hpp"
#include "core/files.hpp"

namespace fabscope::bench {

namespace {
template <typename Render>
void write_file(const std::string& path, std::ostream& err, Render&& render) {
  if (path.empty()) return;
  // core::write_output: never renamed over a device or a FIFO (/dev/stdout, a pipe) given as the file.
  try {
    core::write_output(path, render());
  } catch (const Error& e) {
    err << "fabscope bench: " << e.what() << "\n";
  }
}
}  // namespace

int run_and_print(Session& s, const Options& o, const std::string& start_time, std::ostream& out,
                  std::ostream& err) {
  bool header_done = false;
  auto row = [&](const Report& r, const SizeResult& res) {
    if (o.format != Format::Text) return;
    if (!header_done) {
      out << text_header(r);
      header_done = true;
    }
    out << text_row(r, res) << std::flush;
  };
  Report rep = s.run(o, row);
  if (s.prints()) {
    if (o.format == Format::Text) {
      if (!header_done) out << text_header(rep);
      out << text_summary(rep);
    } else if (o.format == Format::Json) {
      out << report_json(rep).dump(2) << "\n";
    } else {
      out << render_csv(rep);
    }
    write_file(o.json_file, err, [&] { return report_json(rep).dump(2) + "\n"; });
    write_file(o.csv_file, err, [&] { return render_csv(rep); });
    write_file(o.nccl_tests_json, err, [&] {
      NcclTestsJsonContext ctx;
      ctx.start_time = start_time;
      ctx.end_time = local_time_now();
      ctx.args = o.argv;
      ctx.env = process_environment();
      ctx.nccl_version_code = s.nccl_version_code();
      ctx.last_error = s.nccl_last_error();
      return nccl_tests_json(rep, ctx);
    });
  }
  out.flush();
  return rep.summary.wrong_total > 0 ? 2 : 0;
}

int run_cli(const Options& o, std::ostream& out, std::ostream& err) {
  try {
    std::string start_time = local_time_now();
    auto session = Session::open(o);
    return run_and_print(*session, o, start_time, out, err);
  } catch (const std::exception& e) {
    abort_mpi_job_if_active(e.what(), err, 3);
    throw;
  }
}

}  // namespace fabscope::bench
